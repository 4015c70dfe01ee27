package app

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestUDPListenInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	rs := ts.create("restream", restreamBody("udp-in", listenInput("INPUT_TYPE_UDP_LISTEN", port, "udp")))
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port))...)
	ts.checkBitrate("restream", rs)
}

func TestUDPURLInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	rec := ts.create("recording", recordingBody("udp-url", urlInput("INPUT_TYPE_UDP_URL", fmt.Sprintf("udp://@:%d", port))))
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port))...)
	ts.checkBitrate("recording", rec)
}

func TestHTTPListenInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	vod := ts.create("vod", playerBody("http-in", testutil.FreePort(t), listenInput("INPUT_TYPE_HTTP_LISTEN", port, "tcp")))
	testutil.Eventually(t, 15*time.Second, "listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(port, "TCP"))
	})
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("http://127.0.0.1:%d/", port))...)
	ts.checkBitrate("vod", vod)
}

func TestHTTPURLInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	// ffmpeg serves the stream over HTTP; sluice GETs it.
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", "-listen", "1", fmt.Sprintf("http://127.0.0.1:%d/live.ts", port))...)
	rs := ts.create("restream", restreamBody("http-url", urlInput("INPUT_TYPE_HTTP_URL", fmt.Sprintf("http://127.0.0.1:%d/live.ts", port))))
	ts.checkBitrate("restream", rs)
}

func TestOtherInputThroughFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "clip.mp4")
	testutil.MakeClip(t, file, 30, 1000)
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	// A local file is an INPUT_TYPE_OTHER address only when the operator allows local files.
	ts := startServerEnv(t, t.TempDir(), nil, func(k string) string {
		if k == "SLUICE_ALLOW_LOCAL_FILES" {
			return "true"
		}
		return ""
	})
	defer ts.stop()
	rec := ts.create("recording", recordingBody("other", urlInput("INPUT_TYPE_OTHER", file)))
	ts.checkBitrate("recording", rec)
}

// TestOtherInputPolicyHeldAtStart: a local-file INPUT_TYPE_OTHER record stored while local files
// were allowed is refused when started by a server that does not allow them (422, saying why).
func TestOtherInputPolicyHeldAtStart(t *testing.T) {
	data := t.TempDir()
	allow := func(k string) string {
		if k == "SLUICE_ALLOW_LOCAL_FILES" {
			return "true"
		}
		return ""
	}
	ts := startServerEnv(t, data, nil, allow)
	body := recordingBody("local", urlInput("INPUT_TYPE_OTHER", filepath.Join(data, "clip.mp4")))
	body["active"] = false
	rec := ts.create("recording", body)
	ts.stop()

	ts = startServer(t, data, nil)
	defer ts.stop()
	var refused struct {
		Error struct{ Code, Message string }
	}
	ts.call("/api/recording/start", map[string]any{"id": rec}, http.StatusUnprocessableEntity, &refused)
	if refused.Error.Code != "UNSUPPORTED" || !strings.Contains(refused.Error.Message, "--allow-local-files") {
		t.Fatalf("start: %+v", refused)
	}
}

func TestGeneratedTestStreamInput(t *testing.T) {
	ts := startFFmpegServer(t)
	vod := ts.create("vod", playerBody("test-pattern", testutil.FreePort(t), map[string]any{
		"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 640, "resolution_height": 360,
		"encoding_rate": 25, "test_video_bitrate": 1000, "sound_hz": 300, "video_duration_sec": 60}))
	// 1000 kbit/s video and the test stream's 128 kbit/s AAC.
	ts.checkBitrateOf("vod", vod, 1128)
}
