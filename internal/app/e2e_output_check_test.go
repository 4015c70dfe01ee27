package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestOutputThatCannotCarryTheCodec: with Opus audio published to the SRT module, an RTMP
// output (FLV) or an flv recording answers 422 at create, unless transcoding re-encodes the
// audio; MPEG-TS outputs and mp4 recordings take it as it is.
func TestOutputThatCannotCarryTheCodec(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	srv := ts.create("srt-servers", map[string]any{"server_name": "opus", "server_port": port})
	waitState(t, ts, "/api/srt-servers/getById", srv, "running")
	src := testutil.Source(500)
	for i, a := range src {
		if a == "aac" {
			src[i] = "libopus"
		}
	}
	testutil.FFmpeg(t, append(src, "-f", "mpegts", srtURL(port, "streamid=publisher/opus/cam"))...)
	input := map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srv, "input_stream_id": "publisher/opus/cam"}
	testutil.Eventually(t, 20*time.Second, "the Opus stream published", func() bool {
		var streams []map[string]any
		ts.call("/api/srt-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
		return len(streams) == 1
	})
	time.Sleep(time.Second) // tracks are set with the first units

	rtmpOut := map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": "rtmp://127.0.0.1:1/live", "output_stream_key": "k"}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ts.call("/api/restream/create", map[string]any{"restream_name": "to-rtmp", "input": input, "output": rtmpOut},
		http.StatusUnprocessableEntity, &e)
	if e.Error.Code != "UNSUPPORTED" || !strings.Contains(e.Error.Message, "Opus") || !strings.Contains(e.Error.Message, "audio_trancoding") {
		t.Errorf("422 body %+v: want it to name the codec and the fix", e)
	}
	body := recordingBody("to-flv", input)
	body["output_format"] = "flv"
	ts.call("/api/recording/create", body, http.StatusUnprocessableEntity, nil)

	// Transcoding the audio fixes it; MPEG-TS and mp4 carry Opus as it is.
	ts.create("restream", map[string]any{"restream_name": "to-rtmp-aac", "input": input, "output": rtmpOut, "active": false,
		"transcoding": map[string]any{"audio_trancoding": "aac"}})
	ts.create("restream", map[string]any{"restream_name": "to-srt", "input": input, "active": false,
		"output": map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d", testutil.FreePort(t))}})
	body = recordingBody("to-mp4", input)
	body["active"] = false
	ts.create("recording", body)
}
