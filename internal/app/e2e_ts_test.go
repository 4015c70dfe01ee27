package app

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestTSInputs: MPEG-TS that ffmpeg sends over UDP (to a listen input, and to a udp://@ URL
// input) and over HTTP (POSTed to a listen input, and served by ffmpeg for a URL input to GET)
// arrives at its bitrate, into a restream, a recording and a player.
func TestTSInputs(t *testing.T) {
	udp := func(port int) string { return fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port) }
	served := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/live.ts", port) }
	cases := []struct {
		name, module string
		input        func(port int) map[string]any
		// out is ffmpeg's output; bound waits for the listen port first; serve: ffmpeg
		// listens and the input dials it.
		out          func(port int) []string
		bound, serve bool
	}{
		{"udp-listen", "restream", func(p int) map[string]any { return listenInput("INPUT_TYPE_UDP_LISTEN", p, "udp") },
			func(p int) []string { return []string{udp(p)} }, false, false},
		{"udp-url", "recording", func(p int) map[string]any { return urlInput("INPUT_TYPE_UDP_URL", fmt.Sprintf("udp://@:%d", p)) },
			func(p int) []string { return []string{udp(p)} }, false, false},
		{"http-listen", "vod", func(p int) map[string]any { return listenInput("INPUT_TYPE_HTTP_LISTEN", p, "tcp") },
			func(p int) []string { return []string{fmt.Sprintf("http://127.0.0.1:%d/", p)} }, true, false},
		{"http-url", "restream", func(p int) map[string]any { return urlInput("INPUT_TYPE_HTTP_URL", served(p)) },
			func(p int) []string { return []string{"-listen", "1", served(p)} }, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := startFFmpegServer(t)
			port := testutil.FreePort(t)
			publish := func() { testutil.FFmpeg(t, append(append(testutil.Source(1000), "-f", "mpegts"), c.out(port)...)...) }
			if c.serve {
				publish()
			}
			var body map[string]any
			switch c.module {
			case "restream":
				body = restreamBody(c.name, c.input(port))
			case "recording":
				body = recordingBody(c.name, c.input(port))
			default:
				body = playerBody(c.name, testutil.FreePort(t), c.input(port))
			}
			id := ts.create(c.module, body)
			if c.bound {
				waitBound(t, port, "TCP")
			}
			if !c.serve {
				publish()
			}
			ts.checkBitrate(c.module, id)
		})
	}
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
