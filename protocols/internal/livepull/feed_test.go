package livepull

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// TestFeedBroken: fewer than MaxBroken unreadable segments in a row are skipped, a readable
// one starts the count again, and the MaxBroken-th in a row is the error, naming the segment
// (its password hidden) and wrapping the reader's error.
func TestFeedBroken(t *testing.T) {
	out := make(chan ingest.Batch, 8)
	f := &Feed{Out: out, Log: slog.New(slog.DiscardHandler), Name: "test"}
	u, _ := url.Parse("http://user:secret@127.0.0.1/seg.ts")
	bad := errors.New("unreadable")
	ok := ingest.Batch{Units: []*media.AccessUnit{{DTS: 1}}}
	ctx := context.Background()
	for round := range 2 {
		for i := range MaxBroken - 1 {
			if err := f.Segment(ctx, u, ingest.Batch{}, bad); err != nil {
				t.Fatalf("round %d, unreadable segment %d: %v, want it skipped", round, i+1, err)
			}
		}
		if err := f.Segment(ctx, u, ok, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d batches sent, want the 2 readable ones", len(out))
	}
	for range MaxBroken - 1 {
		_ = f.Segment(ctx, u, ingest.Batch{}, bad)
	}
	err := f.Segment(ctx, u, ingest.Batch{}, bad)
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), fmt.Sprintf("%d unreadable in a row", MaxBroken)) ||
		strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "127.0.0.1/seg.ts") {
		t.Fatalf("after %d unreadable segments: %v", MaxBroken, err)
	}
}

// TestFeedSends: a batch with nothing in it is not sent; one with only a discontinuity or
// only tracks is; a send that the merger does not take ends with ctx.
func TestFeedSends(t *testing.T) {
	out := make(chan ingest.Batch) // nobody reads: a send blocks
	f := &Feed{Out: out, Log: slog.New(slog.DiscardHandler), Name: "test"}
	u, _ := url.Parse("http://127.0.0.1/seg.ts")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := f.Segment(ctx, u, ingest.Batch{}, nil); err != nil {
		t.Fatalf("empty batch: %v, want nil without a send", err)
	}
	for _, b := range []ingest.Batch{{Disc: true}, {Tracks: []media.Track{{Codec: media.CodecAAC}}}} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := f.Segment(ctx, u, b, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("batch %+v not taken: %v, want the end of ctx (a send was tried)", b, err)
		}
	}
	got := make(chan ingest.Batch, 1)
	go func() { got <- <-out }()
	if err := f.Segment(context.Background(), u, ingest.Batch{Disc: true}, nil); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !b.Disc {
		t.Fatalf("sent %+v, want the discontinuity", b)
	}
}
