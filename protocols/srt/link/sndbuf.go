package link

import "github.com/sluicemedia/sluice/protocols/srt/wire"

// sndPkt is a packet in the send buffer: its header, this connection's own, and its payload,
// which other connections may send too (one reference held here).
type sndPkt struct {
	hdr    [wire.HeaderSize]byte
	seq    uint32
	pl     *Payload
	origin int64 // mux clock when written, µs
}

// msgNo reads the packet's message number from its header.
func (p *sndPkt) msgNo() uint32 {
	return (uint32(p.hdr[4])<<24 | uint32(p.hdr[5])<<16 | uint32(p.hdr[6])<<8 | uint32(p.hdr[7])) & wire.MsgNoMask
}

// sndBuf holds the packets written and not yet acknowledged (nor dropped), from start (the
// oldest unacknowledged sequence number) on, in order. The ring holds them by value, a header
// and a payload reference each (40 bytes), and grows by doubling up to the capacity; Write
// drops the oldest packet rather than grow past it.
type sndBuf struct {
	slots []sndPkt // length a power of two
	head  int
	start uint32
	n     int
	limit int
	bytes int // payload bytes held
}

func newSndBuf(start uint32, limit int) sndBuf {
	return sndBuf{slots: make([]sndPkt, min(64, pow2(limit))), start: start, limit: limit}
}

// end returns the sequence number the next packet gets.
func (s *sndBuf) end() uint32 { return wire.SeqAdd(s.start, int32(s.n)) }

func (s *sndBuf) full() bool { return s.n >= s.limit }

// push appends a packet for sequence number end(), returning it for the caller to fill; its
// payload reference passes to the buffer.
func (s *sndBuf) push() *sndPkt {
	if s.n == len(s.slots) {
		ns := make([]sndPkt, len(s.slots)*2)
		for i := 0; i < s.n; i++ {
			ns[i] = s.slots[(s.head+i)&(len(s.slots)-1)]
		}
		s.slots, s.head = ns, 0
	}
	p := &s.slots[(s.head+s.n)&(len(s.slots)-1)]
	s.n++
	liveQueued.Add(1)
	return p
}

// get returns the packet of seq, or nil when it is not held. The pointer is valid until the
// buffer changes.
func (s *sndBuf) get(seq uint32) *sndPkt {
	off := int(wire.SeqDiff(seq, s.start))
	if off < 0 || off >= s.n {
		return nil
	}
	return &s.slots[(s.head+off)&(len(s.slots)-1)]
}

// at returns the packet i places after start (0 <= i < n).
func (s *sndBuf) at(i int) *sndPkt { return &s.slots[(s.head+i)&(len(s.slots)-1)] }

// front returns the oldest packet, or nil.
func (s *sndBuf) front() *sndPkt {
	if s.n == 0 {
		return nil
	}
	return &s.slots[s.head]
}

// popFront removes the oldest packet, gives its payload reference back and moves start on.
func (s *sndBuf) popFront() {
	p := &s.slots[s.head]
	s.bytes -= p.pl.n
	p.pl.Release()
	*p = sndPkt{}
	s.head = (s.head + 1) & (len(s.slots) - 1)
	s.start = wire.SeqAdd(s.start, 1)
	s.n--
	liveQueued.Add(-1)
}

// release gives every payload reference back.
func (s *sndBuf) release() {
	for s.n > 0 {
		s.popFront()
	}
}
