package app

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// audioOf returns the codec, sample rate and bitrate (kbit/s, from the packet sizes) of the
// first audio stream of a file.
func audioOf(t *testing.T, path string) (codec string, rate int, kbps float64) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
		"stream=codec_name,sample_rate", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n") // TS lists streams per program too
	f := strings.Split(line, ",")
	if len(f) < 2 {
		t.Fatalf("ffprobe %s: audio %q", path, out)
	}
	codec = f[0]
	rate, _ = strconv.Atoi(f[1])
	out, err = exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
		"packet=pts_time,size", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe packets %s: %v", path, err)
	}
	var bytes int
	var first, last float64
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p := strings.Split(line, ",")
		if len(p) < 2 {
			continue
		}
		ts, _ := strconv.ParseFloat(p[0], 64)
		n, _ := strconv.Atoi(p[1])
		if i == 0 {
			first = ts
		} else {
			bytes += n // the first packet starts the span
		}
		last = ts
	}
	if last > first {
		kbps = float64(bytes) * 8 / 1000 / (last - first)
	}
	return codec, rate, kbps
}

// ffmpegChildren returns the server's child processes other than the ones the test started.
func ffmpegChildren(mine ...int) []int {
	var out []int
	for _, pid := range testutil.Children(os.Getpid()) {
		if !slices.Contains(mine, pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestTranscodingAudioAndLifecycle: AAC at the asked bitrate and sample rate through a
// transcoding restream; update replaces the ffmpeg (one at a time), stop and server exit
// leave none.
func TestTranscodingAudioAndLifecycle(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	stopped := false
	defer func() {
		if !stopped {
			ts.stop()
		}
	}()
	inPort, outPort := testutil.FreePort(t), testutil.FreePort(t)
	body := map[string]any{"restream_name": "aac", "input": listenInput("INPUT_TYPE_UDP_LISTEN", inPort, "udp"),
		"output": map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", outPort)},
		"transcoding": map[string]any{"video_transcoding": "libx264", "preset": "ultrafast", "gop": 50,
			"audio_trancoding": "aac", "output_audio_bitrate": 96, "sample_rate": 44100}}
	rs := ts.create("restream", body)
	pub := testutil.FFmpeg(t, append(testutil.Source(800), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", inPort))...)
	mine := []int{pub.Cmd.Process.Pid}

	var job []int
	testutil.Eventually(t, 30*time.Second, "one ffmpeg transcoder", func() bool {
		job = ffmpegChildren(mine...)
		return len(job) == 1
	})
	file := filepath.Join(t.TempDir(), "aac.ts")
	recv := testutil.FFmpeg(t, "-i", fmt.Sprintf("udp://127.0.0.1:%d", outPort), "-c", "copy", "-t", "8", file)
	mine = append(mine, recv.Cmd.Process.Pid)
	if err := recv.Wait(90 * time.Second); err != nil {
		t.Fatalf("receiver: %v", err)
	}
	codec, rate, kbps := audioOf(t, file)
	t.Logf("received audio %s %d Hz %.1f kbit/s", codec, rate, kbps)
	if codec != "aac" || rate != 44100 || kbps < 0.8*96 || kbps > 1.2*96 {
		t.Errorf("audio %s %d Hz %.1f kbit/s, want aac 44100 Hz 96 kbit/s ± 20 %%", codec, rate, kbps)
	}

	// Update: the old ffmpeg goes, one new one runs.
	old := job[0]
	ts.call("/api/restream/update", map[string]any{"id": rs, "transcoding": map[string]any{"audio_trancoding": "mp3",
		"output_audio_bitrate": 128, "sample_rate": 48000}}, http.StatusOK, nil)
	testutil.Eventually(t, 30*time.Second, "the ffmpeg replaced after update", func() bool {
		job = ffmpegChildren(mine...)
		return len(job) == 1 && job[0] != old
	})

	// Stop: no ffmpeg; start again: one; server exit: none.
	ts.call("/api/restream/stop", map[string]any{"id": rs}, http.StatusOK, nil)
	testutil.Eventually(t, 15*time.Second, "no ffmpeg after stop", func() bool { return len(ffmpegChildren(mine...)) == 0 })
	ts.call("/api/restream/start", map[string]any{"id": rs}, http.StatusOK, nil)
	testutil.Eventually(t, 30*time.Second, "one ffmpeg after start", func() bool { return len(ffmpegChildren(mine...)) == 1 })
	ts.stop()
	stopped = true
	testutil.Eventually(t, 10*time.Second, "no ffmpeg after the server exits", func() bool { return len(ffmpegChildren(mine...)) == 0 })
}
