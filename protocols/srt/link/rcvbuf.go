package link

import "github.com/sluicemedia/sluice/protocols/srt/wire"

// rcvBuf holds received packets indexed by sequence number, from start (the next packet Read
// delivers) on. The ring grows by doubling up to the capacity, so steady receiving does not
// allocate; a packet that does not fit is refused.
type rcvBuf struct {
	slots []*packet // length a power of two
	head  int       // index of start
	start uint32
	limit int // capacity, packets
	count int // packets held
}

func newRcvBuf(start uint32, limit int) rcvBuf {
	return rcvBuf{slots: make([]*packet, min(256, pow2(limit))), start: start, limit: limit}
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// offset returns how far seq is from start (negative: before it).
func (r *rcvBuf) offset(seq uint32) int { return int(wire.SeqDiff(seq, r.start)) }

// at returns the packet off places after start, or nil.
func (r *rcvBuf) at(off int) *packet {
	if off < 0 || off >= len(r.slots) {
		return nil
	}
	return r.slots[(r.head+off)&(len(r.slots)-1)]
}

// put stores p off places after start (0 <= off < limit); it reports false when the slot is
// taken.
func (r *rcvBuf) put(off int, p *packet) bool {
	if off >= len(r.slots) {
		r.grow(off + 1)
	}
	i := (r.head + off) & (len(r.slots) - 1)
	if r.slots[i] != nil {
		return false
	}
	r.slots[i] = p
	r.count++
	return true
}

func (r *rcvBuf) grow(need int) {
	n := len(r.slots)
	for n < need {
		n <<= 1
	}
	s := make([]*packet, n)
	for i := range r.slots {
		s[i] = r.slots[(r.head+i)&(len(r.slots)-1)]
	}
	r.slots, r.head = s, 0
}

// pop removes and returns the packet at start (nil for a gap) and moves start on by one.
func (r *rcvBuf) pop() *packet {
	p := r.slots[r.head]
	if p != nil {
		r.slots[r.head] = nil
		r.count--
	}
	r.head = (r.head + 1) & (len(r.slots) - 1)
	r.start = wire.SeqAdd(r.start, 1)
	return p
}

// firstPresent returns the offset of the first packet held before off `end`, or -1.
func (r *rcvBuf) firstPresent(end int) int {
	if r.count == 0 {
		return -1
	}
	end = min(end, len(r.slots))
	for off := 0; off < end; off++ {
		if r.slots[(r.head+off)&(len(r.slots)-1)] != nil {
			return off
		}
	}
	return -1
}

// release returns every packet to the pool.
func (r *rcvBuf) release() {
	for i, p := range r.slots {
		if p != nil {
			putPacket(p)
			r.slots[i] = nil
		}
	}
	r.count = 0
}
