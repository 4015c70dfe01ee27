package segment_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestRun feeds a segmenter from a Stream reader across three publisher sessions: each new
// session is one discontinuity, and Run returns nil when its context ends.
func TestRun(t *testing.T) {
	strm := stream.New("run", stream.Options{QueueSize: 4096})
	defer strm.Close()
	r, err := strm.NewReader("hls")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second, Log: segtest.Quiet})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- segment.Run(ctx, r, segtest.Quiet, sg) }()

	src := segtest.NewSource(25, time.Now())
	for session := range 3 {
		if session > 0 {
			src.Restart(time.Second)
		}
		pub, err := strm.Publish()
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.SetTracks(src.Tracks()); err != nil {
			t.Fatal(err)
		}
		if err := src.Feed(pubWriter{pub}, 3500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		pub.Close()
		// Wait for the reader to take the session's units.
		want := int64(3 * (session + 1))
		deadline := time.Now().Add(30 * time.Second)
		for st.Snapshot().Added < want {
			if time.Now().After(deadline) {
				t.Fatalf("session %d: %d segments", session, st.Snapshot().Added)
			}
			select {
			case <-st.Wait():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var discs int
	for _, s := range st.Snapshot().Segments {
		if s.Discontinuity {
			discs++
		}
	}
	if discs != 2 {
		t.Errorf("%d discontinuities, want 2", discs)
	}
}

type pubWriter struct{ p *stream.Publisher }

func (w pubWriter) WriteUnit(au *media.AccessUnit) error {
	au.Discontinuity = false // the Stream marks sessions itself
	return w.p.Write(au)
}
