package stream

import (
	"math"
	"sync/atomic"

	"github.com/sluicemedia/sluice/internal/media"
)

// slot is one queued unit with this reader's marks.
type slot struct {
	au   *media.AccessUnit
	size uint32 // payload bytes, for the queue's byte count
	disc bool   // first unit of a new publisher session
	gap  bool   // units were dropped just before this one
}

// ring is a bounded single-producer, single-consumer queue of slots. The producer (the
// Stream, under Stream.mu) owns tail, headCache and the byte count; the consumer (the
// goroutine calling Reader.Read) owns head and tailCache. Its size is a power of two.
//
// The payload bytes queued are counted on the producer's side only, so that the consumer
// does no more than before: starts[i] is the byte count when unit i was pushed, and the
// bytes still queued are those pushed since the oldest unit the consumer had not taken when
// the producer last looked (headCache), which makes the count an upper bound.
type ring struct {
	slots  []slot
	starts []uint64 // starts[i&mask] is pushed before unit i
	mask   uint64

	tail      atomic.Uint64
	headCache uint64
	pushed    uint64   // payload bytes pushed so far
	base      uint64   // pushed before unit headCache
	_         [64]byte // producer and consumer fields on different cache lines

	head      atomic.Uint64
	tailCache uint64
}

// init sizes the ring; size must be a power of two.
func (r *ring) init(size int) {
	r.slots = make([]slot, size)
	r.starts = make([]uint64, size)
	r.mask = uint64(size - 1)
}

// size is the ring's capacity.
func (r *ring) size() uint64 { return uint64(len(r.slots)) }

// push queues s; it reports false when the ring is full. Producer only.
func (r *ring) push(s slot) bool { return r.put(s, math.MaxUint64) == budgetNone }

// put queues s unless the ring is full or its payload bytes would go over budget (a unit
// always fits an empty ring); it returns the budget that refused s, or budgetNone. Producer
// only.
func (r *ring) put(s slot, budget uint64) budget {
	t := r.tail.Load()
	if t-r.headCache >= uint64(len(r.slots)) || r.pushed-r.base+uint64(s.size) > budget {
		// Counted against an old view of the consumer's position: look again.
		if b := r.room(t, s.size, budget); b != budgetNone {
			return b
		}
	}
	i := t & r.mask
	r.slots[i] = s
	// starts[t] is overwritten only by unit t+size, which put refuses while unit t is at or
	// after headCache: lookHead reads a valid entry.
	r.starts[i] = r.pushed
	r.pushed += uint64(s.size)
	r.tail.Store(t + 1)
	return budgetNone
}

// room looks at the consumer's position and tells which budget, if any, unit t of size
// bytes is over. Producer only.
func (r *ring) room(t uint64, size uint32, budget uint64) budget {
	r.lookHead()
	if t-r.headCache >= r.size() {
		return budgetQueueUnits
	}
	if q := r.bytes(); q > 0 && q+uint64(size) > budget {
		return budgetQueueBytes
	}
	return budgetNone
}

// lookHead updates the producer's view of the consumer's position. Producer only.
func (r *ring) lookHead() {
	h := r.head.Load()
	if h == r.headCache {
		return
	}
	r.headCache = h
	if h == r.tail.Load() {
		r.base = r.pushed // empty: the next unit starts here
	} else {
		r.base = r.starts[h&r.mask]
	}
}

// len is the number of queued slots as the producer sees it. Producer only.
func (r *ring) len() uint64 {
	r.lookHead()
	return r.tail.Load() - r.headCache
}

// bytes is the payload bytes queued as of the last look at the consumer's position: at
// least what is queued. Producer only.
func (r *ring) bytes() uint64 { return r.pushed - r.base }

// halfEmpty tells whether at most half the ring's slots and half of budget are in use.
// Producer only.
func (r *ring) halfEmpty(budget uint64) bool {
	return r.len() <= r.size()/2 && r.bytes() <= budget/2
}

// pop takes the oldest slot; it reports false when the ring is empty. Consumer only.
func (r *ring) pop() (slot, bool) {
	h := r.head.Load()
	if h == r.tailCache {
		r.tailCache = r.tail.Load()
		if h == r.tailCache {
			return slot{}, false
		}
	}
	i := h & r.mask
	s := r.slots[i]
	r.slots[i] = slot{} // let the unit go once every reader is done with it
	r.head.Store(h + 1)
	return s, true
}
