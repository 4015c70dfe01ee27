package stream

import (
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// writerState is the Stream's view of one reader, guarded by Stream.mu.
type writerState struct {
	started  bool // a unit has been queued
	skip     bool // dropping units until a resume point
	counting bool // skipped units are drops (after an overflow, not while waiting to start)
	disc     bool // the next queued unit is the first of a new publisher session
	gap      bool // units were dropped since the last queued one
	// behindSince is when the reader's queue overflowed; zero once it is back to at most half
	// full.
	behindSince time.Time
}

// clock reads the Stream's clock at most once per write.
type clock struct {
	now func() time.Time
	t   time.Time
}

// get returns the time, reading the clock on first use.
func (c *clock) get() time.Time {
	if c.t.IsZero() {
		c.t = c.now()
	}
	return c.t
}

// fanOut accounts au, of size payload bytes, and queues it for every reader. It returns the
// readers it closed for lagging, to be logged once s.mu is released; nil, without allocating,
// when there are none. It also reports the budget that made it give up the kept GOP, if any.
// s.mu held.
func (s *Stream) fanOut(au *media.AccessUnit, size int) ([]*Reader, budget) {
	now := clock{now: s.opts.Now}
	video := s.isVideo(au.Track)
	key := video && au.Key
	arrival := au.Arrival
	if arrival.IsZero() {
		arrival = now.get()
	}
	s.meter.add(arrival, size, video)
	s.bytesIn += int64(size)
	s.unitsIn++
	gopOver := s.gop.add(au, size, key)
	if gopOver != budgetNone {
		s.gopOverflows++
	}

	// Where a reader that skips may start again: a video key frame, or any unit without video.
	resume := key || !s.video
	var evicted []*Reader
	for i := 0; i < len(s.readers); {
		r := s.readers[i]
		if s.deliver(r, au, size, resume, &now) {
			i++
			continue
		}
		s.removeReaderAt(i)
		s.evicted++
		r.finish(fmt.Errorf("stream %q: reader %q: behind for more than %s: %w",
			s.name, r.name, s.opts.LagLimit, ErrReaderTooSlow))
		evicted = append(evicted, r)
	}
	return evicted, gopOver
}

// deliver queues au for r, or drops it. It reports false when r has been behind for longer
// than the lag limit and must be closed. s.mu held.
func (s *Stream) deliver(r *Reader, au *media.AccessUnit, size int, resume bool, now *clock) bool {
	w := &r.w
	budgetBytes := uint32(s.opts.QueueBytes)
	if !w.behindSince.IsZero() {
		if r.ring.halfEmpty(budgetBytes) {
			w.behindSince = time.Time{}
		} else if now.get().Sub(w.behindSince) > s.opts.LagLimit {
			return false
		}
	}
	if w.skip {
		// Start again only at a resume point and with half the queue free, so that a reader
		// that is just keeping up gets whole GOPs rather than a key frame now and then.
		if !resume || !r.ring.halfEmpty(budgetBytes) {
			if w.counting {
				r.dropped.Add(1)
				s.dropped++
				w.gap = true
			}
			return true
		}
		w.skip = false
	}
	// ring.put, inlined by hand: the common case stays in this function.
	if !r.ring.fits(uint32(size), budgetBytes) {
		if over := r.ring.room(uint32(size), budgetBytes); over != budgetNone {
			s.overflow(r, over, now)
			return true
		}
	}
	r.ring.add(slot{au: au, disc: w.disc, gap: w.gap}, uint32(size))
	w.started, w.disc, w.gap = true, false, false
	r.signal()
	return true
}

// overflow drops the unit that did not fit r's queue and has r skip to the next resume
// point. s.mu held.
func (s *Stream) overflow(r *Reader, over budget, now *clock) {
	w := &r.w
	r.dropped.Add(1)
	s.dropped++
	if over == budgetQueueBytes {
		r.byteOverflows.Add(1)
		s.byteOverflows++
	} else {
		r.unitOverflows.Add(1)
		s.unitOverflows++
	}
	r.cause.Store(uint32(over))
	w.skip, w.counting, w.gap = true, true, true
	if w.behindSince.IsZero() {
		w.behindSince = now.get()
	}
}
