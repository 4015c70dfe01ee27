package link

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Payload is one message's payload in a pooled buffer with a reference count, so that one
// payload can be sent on many connections without a copy each (Conn.WriteShared): each
// connection's send buffer holds a reference until the packet is acknowledged or dropped,
// and so does each batch of datagrams queued for the socket until it is sent. The bytes must
// not change once made.
type Payload struct {
	b    [MaxPayloadSize]byte
	n    int
	refs atomic.Int32
}

// packetBufSize, payloadBufSize and sndPktSize are what a pooled packet, a pooled payload and
// a send-buffer entry take, bytes.
const (
	packetBufSize  = int64(unsafe.Sizeof(packet{}))
	payloadBufSize = int64(unsafe.Sizeof(Payload{}))
	sndPktSize     = int64(unsafe.Sizeof(sndPkt{}))
)

var payloadPool = sync.Pool{New: func() any { return new(Payload) }}

// NewPayload copies p into a pooled payload holding one reference, the caller's, which it
// gives back with Release. p may be at most MaxPayloadSize bytes.
func NewPayload(p []byte) (*Payload, error) {
	if len(p) > MaxPayloadSize {
		return nil, fmt.Errorf("srt payload of %d bytes over %d: %w", len(p), MaxPayloadSize, ErrMessageTooLong)
	}
	return newPayload(p), nil
}

// newPayload is NewPayload for a p known to fit.
func newPayload(p []byte) *Payload {
	pl := payloadPool.Get().(*Payload)
	pl.n = copy(pl.b[:], p)
	pl.refs.Store(1)
	livePayloads.Add(1)
	return pl
}

// Bytes returns the payload; it is valid while the caller holds its reference.
func (p *Payload) Bytes() []byte { return p.b[:p.n] }

// Len returns the payload's length in bytes.
func (p *Payload) Len() int { return p.n }

// Retain takes one more reference, which Release gives back. Only a holder of a reference may
// take another.
func (p *Payload) Retain() {
	if p.refs.Add(1) <= 1 {
		panic("srt: Payload retained after its last release")
	}
}

// Release gives back one reference; with the last the buffer returns to the pool.
func (p *Payload) Release() {
	switch n := p.refs.Add(-1); {
	case n == 0:
		livePayloads.Add(-1)
		payloadPool.Put(p)
	case n < 0:
		panic("srt: Payload released more often than retained")
	}
}

// livePackets, livePayloads and liveQueued count the buffers in use in the process: pooled
// packets and payloads taken and not given back, and send-buffer entries (a header and a
// payload reference each).
var livePackets, livePayloads, liveQueued atomic.Int64

// BufferStats counts the process's SRT packet and payload buffers in use, and the bytes they
// take.
type BufferStats struct {
	// Packets are datagram buffers: received packets waiting for Read, and buffers being read
	// into.
	Packets, PacketBytes int64
	// Payloads are the payloads of packets written and not yet acknowledged (and those their
	// writers hold), each counted once however many connections send it.
	Payloads, PayloadBytes int64
	// Queued are the packets in send buffers: a header of each connection's own and a
	// reference to a payload.
	Queued, QueuedBytes int64
}

// Buffers returns the packet and payload buffers in use now, in the whole process.
func Buffers() BufferStats {
	p, l, q := livePackets.Load(), livePayloads.Load(), liveQueued.Load()
	return BufferStats{
		Packets: p, PacketBytes: p * packetBufSize,
		Payloads: l, PayloadBytes: l * payloadBufSize,
		Queued: q, QueuedBytes: q * sndPktSize,
	}
}
