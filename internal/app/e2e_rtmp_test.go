package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestRTMPServerModuleInput(t *testing.T) {
	ts := startFFmpegServer(t)

	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	rs := ts.create("restream", restreamBody("cam1-out", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam1"}))

	// A second process reads the same stream as from a hardware encoder (timestamp repair on).
	hw := ts.create("recording", recordingBody("cam1-hw", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_HARDWARE", "input_server_id": srv, "input_stream_id": "cam1"}))

	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam1"))...)
	ts.checkBitrate("restream", rs)
	ts.checkBitrate("recording", hw)

	var streams []map[string]any
	ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
	if len(streams) != 1 || streams[0]["stream_id"] != "cam1" || !strings.HasPrefix(streams[0]["publisher"].(string), "127.0.0.1:") {
		t.Fatalf("active streams %v", streams)
	}
	if b, _ := streams[0]["bitrate"].(float64); b < 0.85*sourceKbps || b > 1.15*sourceKbps {
		t.Errorf("active stream bitrate %v kbit/s, want about %v", streams[0]["bitrate"], sourceKbps)
	}
	pub.Stop()
	testutil.Eventually(t, 15*time.Second, "publisher gone from getActiveStreams", func() bool {
		ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
		return len(streams) == 0
	})
}

func TestRTMPListenInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	vod := ts.create("vod", playerBody("rtmp-listen", testutil.FreePort(t), listenInput("INPUT_TYPE_RTMP_LISTEN", port, "tcp")))
	waitBound(t, port, "TCP")
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "anything"))...)
	ts.checkBitrate("vod", vod)
}

func TestRTMPURLInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	// ffmpeg is the remote RTMP server here; sluice plays from it.
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", "-listen", "1", rtmpURL(port, "feed"))...)
	rec := ts.create("recording", recordingBody("pull", urlInput("INPUT_TYPE_RTMP_URL", rtmpURL(port, "feed"))))
	ts.checkBitrate("recording", rec)
}
