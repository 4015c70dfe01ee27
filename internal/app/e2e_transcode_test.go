package app

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestTranscodingRestream: H.264 640x360 in, H.265 320x180 out through a supervised ffmpeg;
// killing that ffmpeg restarts it (restarts counts it); removing the restream leaves no ffmpeg.
func TestTranscodingRestream(t *testing.T) {
	ts := startFFmpegServer(t)

	// A hardware encoder this machine lacks answers 422 and stores nothing.
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	body := restreamBody("hw", listenInput("INPUT_TYPE_UDP_LISTEN", testutil.FreePort(t), "udp"))
	body["transcoding"] = map[string]any{"video_transcoding": "mpsoc_vcu_hevc"}
	ts.call("/api/restream/create", body, http.StatusUnprocessableEntity, &e)
	if e.Error.Code != "UNSUPPORTED" {
		t.Fatalf("hardware encoder: %+v", e)
	}

	inPort, outPort := testutil.FreePort(t), testutil.FreePort(t)
	file := filepath.Join(t.TempDir(), "out.ts")
	body = map[string]any{"restream_name": "to-hevc", "input": listenInput("INPUT_TYPE_UDP_LISTEN", inPort, "udp"),
		"output":      map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", outPort)},
		"transcoding": map[string]any{"video_transcoding": "libx265", "frame_width": 320, "frame_height": 0, "preset": "ultrafast", "output_video_bitrate": 300}}
	rs := ts.create("restream", body)
	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", inPort))...)

	// The transcoder is the server's only child that the test did not start.
	var job int
	testutil.Eventually(t, 30*time.Second, "ffmpeg transcoder started", func() bool {
		for _, pid := range testutil.Children(os.Getpid()) {
			if pid != pub.Cmd.Process.Pid {
				job = pid
				return true
			}
		}
		return false
	})
	recv := testutil.FFmpeg(t, "-i", fmt.Sprintf("udp://127.0.0.1:%d", outPort), "-c", "copy", "-t", "5", file)
	if err := recv.Wait(90 * time.Second); err != nil {
		t.Fatalf("receiver: %v", err)
	}
	p := testutil.FFprobe(t, file, true)
	var hevc bool
	for _, s := range p.Streams {
		n, _ := strconv.Atoi(s.NbFrames)
		t.Logf("received %s %s %dx%d, %d frames", s.CodecType, s.CodecName, s.Width, s.Height, n)
		if s.CodecType == "video" && s.CodecName == "hevc" && s.Width == 320 && s.Height == 180 && n > 25 {
			hevc = true
		}
	}
	if !hevc {
		t.Fatalf("want decodable hevc 320x180, got %+v", p.Streams)
	}

	// Kill the transcoder: the supervisor starts a new one and counts the restart.
	if err := syscall.Kill(job, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "transcoder restarted", func() bool {
		var rec map[string]any
		ts.call("/api/restream/getById", map[string]any{"id": rs}, http.StatusOK, &rec)
		kids := testutil.Children(os.Getpid())
		return rec["restarts"].(float64) >= 1 && len(kids) == 2 && !slices.Contains(kids, job)
	})

	ts.call("/api/restream/remove", map[string]any{"id": rs}, http.StatusOK, nil)
	testutil.Eventually(t, 15*time.Second, "no ffmpeg left after remove", func() bool {
		kids := testutil.Children(os.Getpid())
		return len(kids) == 1 && kids[0] == pub.Cmd.Process.Pid
	})
}
