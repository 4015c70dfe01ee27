package ffin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

func resources() (goroutines, fds int) {
	ents, _ := os.ReadDir("/proc/self/fd")
	return runtime.NumGoroutine(), len(ents)
}

// TestRunRepeat runs the input 4 times into one stream, as the supervisor restarts it: 3
// discontinuities, and no goroutine or descriptor left behind. Not parallel: it counts them.
func TestRunRepeat(t *testing.T) {
	ffmpeg := requireFFmpeg(t)
	path := sourceFile(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, path)
	}))
	defer srv.Close()
	s := stream.New("repeat", stream.Options{})
	stop := collect(t, s)
	g0, f0 := resources()
	for range 4 {
		if err := Run(context.Background(), ffmpeg, srv.URL+"/src.mp4", s, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Errorf("%d discontinuities, want 3", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, f := resources()
		if g <= g0 && f <= f0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d (baseline %d), fds %d (baseline %d)", g, g0, f, f0)
		}
		time.Sleep(100 * time.Millisecond)
	}
	aus := stop()
	if len(aus) < 4*6*25 {
		t.Errorf("%d units from 4 runs", len(aus))
	}
}
