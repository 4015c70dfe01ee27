package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
)

// TestMergerSourceError: a source that fails sends its error and then closes its channel; Run
// returns that error, never a clean end, however the two arrive. Both are ready before Run
// looks, so a select that took the close first ended the run as if the source had simply
// finished (an HLS pull of an encrypted playlist then said "ended before any media").
func TestMergerSourceError(t *testing.T) {
	want := errors.New("encrypted segments")
	for i := range 200 {
		s := stream.New("merge", stream.Options{})
		pub, err := s.Publish()
		if err != nil {
			t.Fatal(err)
		}
		m := NewMerger(pub, nil, "test", 4)
		ch := make(chan Batch)
		m.AddSource("main", ch)
		errs := make(chan error, 1)
		errs <- want
		close(ch)
		if got := m.Run(context.Background(), errs); !errors.Is(got, want) {
			t.Fatalf("run %d: Run returned %v, want the source's error", i, got)
		}
		pub.Close()
		s.Close()
	}
}
