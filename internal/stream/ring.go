package stream

import (
	"math"
	"sync/atomic"

	"github.com/sluicemedia/sluice/internal/media"
)

// slot is one queued unit with this reader's marks.
type slot struct {
	au    *media.AccessUnit
	start uint32 // ring.pushed before this unit; written by the producer only
	disc  bool   // first unit of a new publisher session
	gap   bool   // units were dropped just before this one
}

// ring is a bounded single-producer, single-consumer queue of slots. The producer (the
// Stream, under Stream.mu) owns tail, headCache and the byte count; the consumer (the
// goroutine calling Reader.Read) owns head and tailCache. Its size is a power of two.
//
// The payload bytes queued are counted by the producer alone, so that the consumer does no
// more than before: each slot records the bytes pushed before it (start), and the bytes
// queued are those pushed since the oldest unit the consumer had not taken when the producer
// last looked (headCache), which makes the count an upper bound. Counts are modulo 2^32:
// what is queued stays far below (a budget of at most 1 GiB, units of at most 1 GiB).
type ring struct {
	slots []slot
	mask  uint64

	tail      atomic.Uint64
	headCache uint64
	pushed    uint32 // payload bytes pushed so far
	base      uint32 // pushed before unit headCache
	// Producer and consumer fields on different cache lines: in a Reader, whose first 40
	// bytes are the producer's too, the producer's end at byte 96 and head starts at 128.
	_ [32]byte

	head      atomic.Uint64
	tailCache uint64
}

// init sizes the ring; size must be a power of two.
func (r *ring) init(size int) {
	r.slots = make([]slot, size)
	r.mask = uint64(size - 1)
}

// size is the ring's capacity.
func (r *ring) size() uint64 { return uint64(len(r.slots)) }

// push queues s, counting no bytes; it reports false when the ring is full. Producer only.
func (r *ring) push(s slot) bool { return r.put(s, 0, math.MaxUint32) == budgetNone }

// put queues s, a unit of size payload bytes, unless the ring is full or its bytes would go
// over budget (a unit always fits an empty ring); it returns the budget that refused s, or
// budgetNone. Producer only.
func (r *ring) put(s slot, size, budget uint32) budget {
	if !r.fits(size, budget) {
		if b := r.room(size, budget); b != budgetNone {
			return b
		}
	}
	r.add(s, size)
	return budgetNone
}

// fits tells whether a unit of size bytes fits, as the producer last saw the consumer's
// position; when it does not, room looks again. Producer only.
func (r *ring) fits(size, budget uint32) bool {
	return r.tail.Load()-r.headCache < uint64(len(r.slots)) && r.pushed-r.base+size <= budget
}

// add queues s, a unit of size bytes, once fits or room made sure it fits. Producer only.
func (r *ring) add(s slot, size uint32) {
	t := r.tail.Load()
	// Slot t is rewritten only by unit t+size, which is refused while unit t is at or after
	// headCache: lookHead reads a valid start.
	s.start = r.pushed
	r.slots[t&r.mask] = s
	r.pushed += size
	r.tail.Store(t + 1)
}

// room looks at the consumer's position and tells which budget, if any, the next unit, of
// size bytes, is over. Producer only.
func (r *ring) room(size, budget uint32) budget {
	r.lookHead()
	if r.tail.Load()-r.headCache >= r.size() {
		return budgetQueueUnits
	}
	if q := r.bytes(); q > 0 && q+size > budget {
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
		r.base = r.slots[h&r.mask].start
	}
}

// len is the number of queued slots as the producer sees it. Producer only.
func (r *ring) len() uint64 {
	r.lookHead()
	return r.tail.Load() - r.headCache
}

// bytes is the payload bytes queued as of the last look at the consumer's position: at
// least what is queued. Producer only.
func (r *ring) bytes() uint32 { return r.pushed - r.base }

// halfEmpty tells whether at most half the ring's slots and half of budget are in use.
// Producer only.
func (r *ring) halfEmpty(budget uint32) bool {
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
	// Let the unit go once every reader is done with it; start is the producer's.
	r.slots[i].au = nil
	r.head.Store(h + 1)
	return s, true
}
