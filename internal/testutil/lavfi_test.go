package testutil_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestPatternArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(testutil.Pattern{}.Args(), " ")
	want := "-f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000"
	if got != want {
		t.Errorf("zero Pattern: %q, want %q", got, want)
	}
	got = strings.Join(testutil.Pattern{Width: 64, Height: 48, FPS: 10, Realtime: true, Silent: true}.Args(), " ")
	if want := "-re -f lavfi -i testsrc2=size=64x48:rate=10"; got != want {
		t.Errorf("silent realtime Pattern: %q, want %q", got, want)
	}
}

// TestPatternProbes has ffmpeg make a short file from a pattern and ffprobe read back the
// size, rate and sample rate asked for.
func TestPatternProbes(t *testing.T) {
	t.Parallel()
	ffmpeg := testutil.RequireFFmpeg(t)
	out := filepath.Join(t.TempDir(), "p.mkv")
	args := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
		testutil.Pattern{Width: 96, Height: 64, FPS: 10, SampleRate: 44100}.Args()...)
	args = append(args, "-t", "0.5", "-c:v", "rawvideo", "-c:a", "pcm_s16le", out)
	if b, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	b, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=width,height,r_frame_rate,sample_rate",
		"-of", "compact=p=0:nk=1", out).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	s := string(b)
	for _, want := range []string{"96|64|10/1", "44100"} {
		if !strings.Contains(s, want) {
			t.Errorf("ffprobe says %q, want %q in it", s, want)
		}
	}
}
