package link

import (
	"net/netip"
	"sync"
)

// bufSize is the size of every packet buffer: a 1500-byte MSS less nothing, so a datagram of
// any MSS libsrt allows fits, and one larger shows as truncated.
const bufSize = 1500

// packet is a pooled datagram buffer. The buffer a datagram is read into is the one that sits
// in the receive buffer until Read copies the payload out; on the send side it holds the
// packet as it goes on the wire until it is acknowledged or dropped.
type packet struct {
	buf  [bufSize]byte
	n    int            // datagram length
	from netip.AddrPort // sender (receive side)

	// Receive side, set when the packet enters the receive buffer.
	seq    uint32
	ts     int64 // unwrapped timestamp, microseconds of the peer's clock
	key    uint8 // KK bits
	rexmit bool  // R flag: a retransmission

	// Send side.
	origin int64 // mux clock when written, microseconds
}

var packetPool = sync.Pool{New: func() any { return new(packet) }}

func getPacket() *packet { return packetPool.Get().(*packet) }

func putPacket(p *packet) {
	p.n = 0
	packetPool.Put(p)
}
