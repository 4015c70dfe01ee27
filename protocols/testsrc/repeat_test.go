package testsrc

import (
	"context"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestRunRepeat runs the generator 4 times into one stream, as the supervisor restarts it:
// 3 discontinuities, and no goroutine or descriptor left behind. Not parallel: it counts them.
func TestRunRepeat(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	s := stream.New("repeat", stream.Options{})
	p := Params{Width: 160, Height: 120, DurationSec: 1, BitrateKbps: 200}
	streamtest.CheckRestarts(t, s, func() error { return Run(context.Background(), s, Options{FFmpeg: ffmpeg, Params: p}) })
}
