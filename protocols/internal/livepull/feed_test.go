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
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
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

// TestMissing: a segment answering 404 is given up after MissingTries answers (window 0 here),
// one answering 410 at its first, one answering 503 never; none is skipped before the origin
// served the source a segment; a skip does not make the next batch a discontinuity (its
// timestamps keep the hole, in step with the other sources).
func TestMissing(t *testing.T) {
	out := make(chan ingest.Batch, 1)
	f := &Feed{Out: out, Log: slog.New(slog.DiscardHandler), Name: "test"}
	u, _ := url.Parse("http://127.0.0.1/seg.ts")
	notFound, gone, busy := &httpget.StatusError{Code: 404}, &httpget.StatusError{Code: 410}, &httpget.StatusError{Code: 503}
	m := f.Missing(0, time.Hour)
	for range 2 * MissingTries {
		if !m.Failed(notFound) {
			t.Fatal("skipped before any segment was served")
		}
	}
	if m.Skip(u, fmt.Errorf("%w: %w", httpget.ErrStalled, notFound)) {
		t.Fatal("a stall taken for a skip")
	}
	if err := f.Segment(context.Background(), u, ingest.Batch{Units: []*media.AccessUnit{{DTS: 1}}}, nil); err != nil || (<-out).Disc {
		t.Fatalf("a served segment: %v, or a discontinuity before any skip", err)
	}
	m = f.Missing(0, time.Hour)
	for i := range MissingTries {
		if again := m.Failed(notFound); again != (i < MissingTries-1) {
			t.Fatalf("404 number %d: try again %v", i+1, again)
		}
	}
	if !m.Skip(u, httpget.ErrGone) {
		t.Fatal("404s not skipped")
	}
	if m := f.Missing(0, time.Hour); !m.Skip(u, gone) {
		t.Fatal("410 not skipped")
	}
	m = f.Missing(0, time.Hour)
	for range 2 * MissingTries {
		if !m.Failed(busy) {
			t.Fatal("503 given up")
		}
	}
	if err := f.Segment(context.Background(), u, ingest.Batch{Units: []*media.AccessUnit{{DTS: 2}}}, nil); err != nil || (<-out).Disc {
		t.Fatalf("after skips: %v, or a discontinuity", err)
	}
}
