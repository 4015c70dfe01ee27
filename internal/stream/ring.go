package stream

import (
	"sync/atomic"

	"github.com/sluicemedia/sluice/internal/media"
)

// slot is one queued unit with this reader's marks.
type slot struct {
	au   *media.AccessUnit
	disc bool // first unit of a new publisher session
	gap  bool // units were dropped just before this one
}

// ring is a bounded single-producer, single-consumer queue of slots. The producer (the
// Stream, under Stream.mu) owns tail and headCache; the consumer (the goroutine calling
// Reader.Read) owns head and tailCache. Its size is a power of two.
type ring struct {
	slots []slot
	mask  uint64

	tail      atomic.Uint64
	headCache uint64
	_         [64]byte // producer and consumer fields on different cache lines

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

// push queues s; it reports false when the ring is full. Producer only.
func (r *ring) push(s slot) bool {
	t := r.tail.Load()
	if t-r.headCache >= r.size() {
		r.headCache = r.head.Load()
		if t-r.headCache >= r.size() {
			return false
		}
	}
	r.slots[t&r.mask] = s
	r.tail.Store(t + 1)
	return true
}

// len is the number of queued slots as the producer sees it. Producer only.
func (r *ring) len() uint64 {
	r.headCache = r.head.Load()
	return r.tail.Load() - r.headCache
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
