package link

import (
	"net/netip"
	"sync"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// bufSize is the size of every packet buffer: a 1500-byte MSS less nothing, so a datagram of
// any MSS libsrt allows fits, and one larger shows as truncated.
const bufSize = 1500

// packet is a pooled datagram buffer: the buffer a datagram is read into is the one that sits
// in the receive buffer until Read copies the payload out. (The send side keeps a header per
// packet and the payload in a Payload, shared between connections.)
type packet struct {
	buf  [bufSize]byte
	n    int            // datagram length
	from netip.AddrPort // sender (receive side)

	// Set when the packet enters the receive buffer.
	seq    uint32
	ts     int64         // unwrapped timestamp, microseconds of the peer's clock
	key    wire.KeyIndex // KK bits
	rexmit bool          // R flag: a retransmission
}

var packetPool = sync.Pool{New: func() any { return new(packet) }}

func getPacket() *packet {
	livePackets.Add(1)
	return packetPool.Get().(*packet)
}

func putPacket(p *packet) {
	p.n = 0
	livePackets.Add(-1)
	packetPool.Put(p)
}
