package ffin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestRunRepeat runs the input 4 times into one stream, as the supervisor restarts it: 3
// discontinuities, and no goroutine or descriptor left behind. Not parallel: it counts them.
func TestRunRepeat(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	path := sourceFile(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, path)
	}))
	defer srv.Close()
	s := stream.New("repeat", stream.Options{})
	stop := collect(t, s)
	streamtest.CheckRestarts(t, s, func() error {
		return Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: srv.URL + "/src.mp4"})
	})
	aus := stop()
	if len(aus) < 4*6*25 {
		t.Errorf("%d units from 4 runs", len(aus))
	}
}
