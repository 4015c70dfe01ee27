package link

import "github.com/sluicemedia/sluice/protocols/srt/wire"

// sndBuf holds the packets written and not yet acknowledged (nor dropped), from start (the
// oldest unacknowledged sequence number) on, in order. The ring grows by doubling up to the
// capacity; Write drops the oldest packet rather than grow past it.
type sndBuf struct {
	slots []*packet // length a power of two
	head  int
	start uint32
	n     int
	limit int
	bytes int // payload bytes held
}

func newSndBuf(start uint32, limit int) sndBuf {
	return sndBuf{slots: make([]*packet, min(64, pow2(limit))), start: start, limit: limit}
}

// end returns the sequence number the next packet gets.
func (s *sndBuf) end() uint32 { return wire.SeqAdd(s.start, int32(s.n)) }

func (s *sndBuf) full() bool { return s.n >= s.limit }

// push appends p as the packet of sequence number end().
func (s *sndBuf) push(p *packet, payload int) {
	if s.n == len(s.slots) {
		ns := make([]*packet, len(s.slots)*2)
		for i := 0; i < s.n; i++ {
			ns[i] = s.slots[(s.head+i)&(len(s.slots)-1)]
		}
		s.slots, s.head = ns, 0
	}
	s.slots[(s.head+s.n)&(len(s.slots)-1)] = p
	s.n++
	s.bytes += payload
}

// get returns the packet of seq, or nil when it is not held.
func (s *sndBuf) get(seq uint32) *packet {
	off := int(wire.SeqDiff(seq, s.start))
	if off < 0 || off >= s.n {
		return nil
	}
	return s.slots[(s.head+off)&(len(s.slots)-1)]
}

// front returns the oldest packet, or nil.
func (s *sndBuf) front() *packet {
	if s.n == 0 {
		return nil
	}
	return s.slots[s.head]
}

// popFront removes the oldest packet, returns it to the pool and moves start on.
func (s *sndBuf) popFront() {
	p := s.slots[s.head]
	s.slots[s.head] = nil
	s.head = (s.head + 1) & (len(s.slots) - 1)
	s.start = wire.SeqAdd(s.start, 1)
	s.n--
	s.bytes -= p.n - wire.HeaderSize
	putPacket(p)
}

// release returns every packet to the pool.
func (s *sndBuf) release() {
	for s.n > 0 {
		s.popFront()
	}
}
