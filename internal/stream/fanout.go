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

// fanOut accounts au and queues it for every reader. It returns the readers it closed for
// lagging, to be logged once s.mu is released; nil, without allocating, when there are none.
// s.mu held.
func (s *Stream) fanOut(au *media.AccessUnit) []*Reader {
	now := clock{now: s.opts.Now}
	video := s.isVideo(au.Track)
	key := video && au.Key
	arrival := au.Arrival
	if arrival.IsZero() {
		arrival = now.get()
	}
	size := au.Size()
	s.meter.add(arrival, size, video)
	s.bytesIn += int64(size)
	s.unitsIn++
	s.gop.add(au, key)

	// Where a reader that skips may start again: a video key frame, or any unit without video.
	resume := key || !s.video
	var evicted []*Reader
	for i := 0; i < len(s.readers); {
		r := s.readers[i]
		if s.deliver(r, au, resume, &now) {
			i++
			continue
		}
		s.removeReaderAt(i)
		r.finish(fmt.Errorf("stream %q: reader %q: behind for more than %s: %w",
			s.name, r.name, s.opts.LagLimit, ErrReaderTooSlow))
		evicted = append(evicted, r)
	}
	return evicted
}

// deliver queues au for r, or drops it. It reports false when r has been behind for longer
// than the lag limit and must be closed. s.mu held.
func (s *Stream) deliver(r *Reader, au *media.AccessUnit, resume bool, now *clock) bool {
	w := &r.w
	if !w.behindSince.IsZero() {
		if r.ring.len() <= r.ring.size()/2 {
			w.behindSince = time.Time{}
		} else if now.get().Sub(w.behindSince) > s.opts.LagLimit {
			return false
		}
	}
	if w.skip {
		// Start again only at a resume point and with half the queue free, so that a reader
		// that is just keeping up gets whole GOPs rather than a key frame now and then.
		if !resume || r.ring.len() > r.ring.size()/2 {
			if w.counting {
				r.dropped.Add(1)
				w.gap = true
			}
			return true
		}
		w.skip = false
	}
	if !r.ring.push(slot{au: au, disc: w.disc, gap: w.gap}) {
		r.dropped.Add(1)
		w.skip, w.counting, w.gap = true, true, true
		if w.behindSince.IsZero() {
			w.behindSince = now.get()
		}
		return true
	}
	w.started, w.disc, w.gap = true, false, false
	r.signal()
	return true
}
