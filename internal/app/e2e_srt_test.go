package app

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// srtURL is an SRT address for ffmpeg, whose latency option is in microseconds.
func srtURL(port int, query string) string {
	return fmt.Sprintf("srt://127.0.0.1:%d?latency=200000&%s", port, query)
}

func TestSRTServerModule(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	dir := t.TempDir()
	port, outPort := testutil.FreePort(t), testutil.FreePort(t)
	srv := ts.create("srt-servers", map[string]any{"server_name": "Studio A", "server_port": port})
	waitState(t, ts, "/api/srt-servers/getById", srv, "running")

	// A restream reads the published stream and sends it out over SRT to an ffmpeg listener.
	outFile := filepath.Join(dir, "out.ts")
	recv := testutil.FFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?mode=listener", outPort), "-c", "copy", "-t", "6", outFile)
	rs := ts.create("restream", map[string]any{"restream_name": "srt-relay",
		"input":  map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srv, "input_stream_id": "publisher/studio-a/cam1"},
		"output": map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d", outPort)}})
	// A second process reads the same stream as from a hardware encoder (timestamp repair on),
	// named in the Haivision stream-id form.
	hw := ts.create("recording", recordingBody("srt-hw", map[string]any{
		"input_type": "INPUT_TYPE_SRT_HARDWARE", "input_server_id": srv, "input_stream_id": "#!::r=cam1,m=publish"}))
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "streamid=publisher/studio-a/cam1"))...)
	ts.checkBitrate("restream", rs)
	ts.checkBitrate("recording", hw)

	var streams []map[string]any
	ts.call("/api/srt-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
	if len(streams) != 1 || !strings.Contains(fmt.Sprint(streams[0]["stream_id"]), "cam1") ||
		!strings.HasPrefix(fmt.Sprint(streams[0]["publisher"]), "127.0.0.1:") || streams[0]["rtt_ms"] == nil {
		t.Fatalf("active streams %v", streams)
	}
	if err := recv.Wait(60 * time.Second); err != nil {
		t.Fatalf("SRT output receiver: %v", err)
	}
	checkReceived(t, outFile)

	// A player of the module gets the same stream with a receiver stream id.
	playFile := filepath.Join(dir, "play.ts")
	if err := testutil.FFmpeg(t, "-i", srtURL(port, "streamid=receiver/studio-a/cam1"), "-c", "copy", "-t", "6", playFile).Wait(60 * time.Second); err != nil {
		t.Fatalf("SRT receiver: %v", err)
	}
	checkReceived(t, playFile)
}

func TestSRTListenInput(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	port := testutil.FreePort(t)
	vod := ts.create("vod", playerBody("srt-listen", testutil.FreePort(t), listenInput("INPUT_TYPE_SRT_LISTEN", port, "udp")))
	testutil.Eventually(t, 15*time.Second, "SRT listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(port, "UDP"))
	})
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "streamid=anything"))...)
	ts.checkBitrate("vod", vod)
}

func TestSRTURLInput(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	port := testutil.FreePort(t)
	// ffmpeg listens; sluice calls it.
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "mode=listener"))...)
	rec := ts.create("recording", recordingBody("srt-call", urlInput("INPUT_TYPE_SRT_URL", fmt.Sprintf("srt://127.0.0.1:%d?latency=200", port))))
	ts.checkBitrate("recording", rec)
}
