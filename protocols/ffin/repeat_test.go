package ffin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
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
	b0 := testutil.TakeBaseline()
	for range 4 {
		if err := Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: srv.URL + "/src.mp4"}); err != nil {
			t.Fatal(err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Errorf("%d discontinuities, want 3", d)
	}
	b0.Check(t, 10*time.Second)
	aus := stop()
	if len(aus) < 4*6*25 {
		t.Errorf("%d units from 4 runs", len(aus))
	}
}
