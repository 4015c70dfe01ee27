package testsrc

import (
	"context"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestRunRepeat runs the generator 4 times into one stream, as the supervisor restarts it:
// 3 discontinuities, and no goroutine or descriptor left behind. Not parallel: it counts them.
func TestRunRepeat(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	s := stream.New("repeat", stream.Options{})
	b0 := testutil.TakeBaseline()
	for range 4 {
		p := Params{Width: 160, Height: 120, DurationSec: 1, BitrateKbps: 200}
		if err := Run(context.Background(), s, Options{FFmpeg: ffmpeg, Params: p}); err != nil {
			t.Fatal(err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Errorf("%d discontinuities, want 3", d)
	}
	b0.Check(t, 10*time.Second)
}
