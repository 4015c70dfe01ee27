package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PatternFile has ffmpeg encode two seconds of a 320x240 test pattern and a 44.1 kHz sine tone
// (Pattern) with the video codec vcodec, a key frame every 25 frames, and the audio codec
// acodec into a file of format (ffmpeg's -f: "flv", "mpegts"), and returns the file's bytes.
// The test fails, with ffmpeg's output, when ffmpeg does.
func PatternFile(t testing.TB, vcodec, acodec, format string) []byte {
	t.Helper()
	ffmpeg := RequireFFmpeg(t)
	out := filepath.Join(t.TempDir(), "out."+format)
	args := append([]string{"-hide_banner", "-loglevel", "error"}, Pattern{Width: 320, Height: 240, SampleRate: 44100}.Args()...)
	args = append(args, "-t", "2", "-c:v", vcodec, "-g", "25", "-c:a", acodec)
	if vcodec == "libx265" {
		args = append(args, "-x265-params", "log-level=error")
	}
	if msg, err := exec.Command(ffmpeg, append(args, "-f", format, out)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s+%s to %s: %v\n%s", vcodec, acodec, format, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
