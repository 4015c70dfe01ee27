package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Reader receives a Stream's units through a bounded queue. Read is for one goroutine; Close,
// Dropped and Name may be called from any.
//
// The fields the Stream touches on every write come first, in the Reader's first two cache
// lines (a Reader is 256 bytes, so the allocator aligns it); the consumer's position follows on
// a line of its own (TestReaderLayout).
type Reader struct {
	w    writerState   // guarded by s.mu
	wake chan struct{} // one pending wake-up at most
	ring ring

	s       *Stream
	name    string
	log     *slog.Logger
	done    chan struct{} // closed by finish
	err     atomic.Pointer[error]
	dropped atomic.Int64
	// Overflows of the queue by budget, and the budget of the latest one (for the log).
	unitOverflows atomic.Int64
	byteOverflows atomic.Int64
	cause         atomic.Uint32

	// Owned by the goroutine calling Read.
	loggedDrops int64
	loggedAt    time.Time
}

// NewReader opens a reader named name (for logs). Its queue starts with the current GOP, so
// its first video unit is a key frame; with no GOP kept it starts at the next key frame. It
// fails with ErrClosed once the stream is closed.
func (s *Stream) NewReader(name string) (*Reader, error) {
	r := &Reader{
		s:    s,
		name: name,
		log:  s.log.With("reader", name),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	r.ring.init(s.opts.QueueSize)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("stream %q: %w", s.name, ErrClosed)
	}
	r.w.started = s.gop.units(func(au *media.AccessUnit, size uint32) { r.ring.put(slot{au: au}, size, math.MaxUint32) })
	if r.w.started {
		r.signal()
	} else {
		r.w.skip = true
	}
	s.readers = append(s.readers, r)
	return r, nil
}

// Name returns the reader's name.
func (r *Reader) Name() string { return r.name }

// Stream returns the stream r reads.
func (r *Reader) Stream() *Stream { return r.s }

// Pending returns the number of units queued for this reader: what Read returns without
// waiting. For the goroutine calling Read.
func (r *Reader) Pending() int { return int(r.ring.tail.Load() - r.ring.head.Load()) }

// Dropped counts the units this reader lost because it was behind.
func (r *Reader) Dropped() int64 { return r.dropped.Load() }

// ReaderStats counts what a reader lost to its queue's budgets.
type ReaderStats struct {
	// Dropped counts the units lost because the reader was behind.
	Dropped int64
	// UnitOverflows and ByteOverflows count the times its queue overflowed, by the budget it
	// ran into: Options.QueueSize units or Options.QueueBytes bytes. Each overflow drops
	// units until the next video key frame.
	UnitOverflows, ByteOverflows int64
}

// Stats returns the reader's counters. Safe for concurrent use.
func (r *Reader) Stats() ReaderStats {
	return ReaderStats{Dropped: r.dropped.Load(), UnitOverflows: r.unitOverflows.Load(), ByteOverflows: r.byteOverflows.Load()}
}

// Read returns the next unit, waiting for one until ctx ends or the reader closes. The unit is
// shared and read-only. See the package documentation for Discontinuity. Read returns ctx's
// error when ctx ends, ErrReaderTooSlow (wrapped) once the reader has been closed for lagging,
// ErrClosed after Close, and io.EOF once the stream is closed and the queue is drained.
func (r *Reader) Read(ctx context.Context) (*media.AccessUnit, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Load the error before popping: units queued before the stream closed are then
		// visible, and a closed stream still hands them out before io.EOF.
		errp := r.err.Load()
		if errp != nil && !errors.Is(*errp, io.EOF) {
			return nil, *errp
		}
		if sl, ok := r.ring.pop(); ok {
			if sl.gap {
				r.logDrops()
			}
			if sl.disc && !sl.au.Discontinuity {
				au := *sl.au // shallow: the payload stays shared
				au.Discontinuity = true
				return &au, nil
			}
			return sl.au, nil
		}
		if errp != nil {
			return nil, *errp
		}
		select {
		case <-r.wake:
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close closes the reader: Read returns ErrClosed. Idempotent.
func (r *Reader) Close() {
	s := r.s
	s.mu.Lock()
	s.removeReader(r)
	s.mu.Unlock()
	r.finish(ErrClosed)
}

// signal wakes Read without blocking.
func (r *Reader) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// finish closes the reader with err; only the first call counts.
func (r *Reader) finish(err error) {
	if r.err.CompareAndSwap(nil, &err) {
		close(r.done)
	}
}

// logDrops logs the drops so far, at most once a second. Read calls it on the first unit after
// a gap, so that the clock is read once per gap rather than once per unit.
func (r *Reader) logDrops() {
	d := r.dropped.Load()
	if d == r.loggedDrops {
		return
	}
	now := r.s.opts.Now()
	if now.Sub(r.loggedAt) < time.Second {
		return
	}
	b := budget(r.cause.Load())
	r.log.Warn("reader behind: dropped units", "dropped", d-r.loggedDrops, "total", d,
		"budget", b.String(), "limit", b.limit(&r.s.opts))
	r.loggedDrops, r.loggedAt = d, now
}
