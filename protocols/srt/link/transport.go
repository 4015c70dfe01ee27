package link

import (
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
)

// transport moves datagrams for a mux: UDP in production, memory in tests.
type transport interface {
	// readBatch reads at least one datagram into ps[i].buf, setting n (0 for a datagram to
	// ignore, such as a truncated one) and from; it blocks until then or until close.
	readBatch(ps []*packet) (int, error)
	// writeBatch sends every message of o.
	writeBatch(o *outbox) error
	// lagging reports whether datagrams the socket received may not have been handled yet:
	// the read loop is busy with a batch, or data came since it last found the socket empty.
	// It does not block.
	lagging() bool
	// setIdleHook sets what the read loop calls, on its own goroutine, each time it finds the
	// socket empty and waits for data (set before the read loop starts).
	setIdleHook(fn func())
	localAddr() net.Addr
	close() error
}

// readBatchSize is how many datagrams one read takes at most (recvmmsg vlen).
const readBatchSize = 32

// outbox is a batch of datagrams to send: what a mux's read loop or clock builds during one
// round and sends with one sendmmsg. A control packet is built in a buffer the outbox owns; a
// data packet is two pieces, its header in such a buffer and its payload where it lies (a
// Payload, maybe shared with other connections, on which the outbox holds a reference until
// the batch is sent).
type outbox struct {
	bufs  [][bufSize]byte
	iov   [][2][]byte
	msgs  []ipv4.Message // ipv4.Message and ipv6.Message are both socket.Message
	peers []netip.AddrPort
	held  []*Payload
	n     int
	sys   sysBatch // the system's batch headers, where the platform's writer needs them
}

func newOutbox(size int) *outbox {
	o := &outbox{
		bufs:  make([][bufSize]byte, size),
		iov:   make([][2][]byte, size),
		msgs:  make([]ipv4.Message, size),
		peers: make([]netip.AddrPort, size),
		held:  make([]*Payload, size),
	}
	return o
}

// room returns how many more datagrams fit.
func (o *outbox) room() int { return len(o.bufs) - o.n }

// buf returns the empty buffer of the next datagram; the caller appends to it and calls
// commit. It must not be called without room.
func (o *outbox) buf() []byte { return o.bufs[o.n][:0] }

// commit adds the datagram b (built in buf's storage) for to.
func (o *outbox) commit(b []byte, to *net.UDPAddr, ap netip.AddrPort) {
	o.iov[o.n][0] = b
	o.msgs[o.n] = ipv4.Message{Buffers: o.iov[o.n][:1], Addr: to}
	o.peers[o.n] = ap
	o.n++
}

// commitData adds a data packet for to: hdr (built in buf's storage) and pl's bytes, on which
// it takes a reference until the flush.
func (o *outbox) commitData(hdr []byte, pl *Payload, to *net.UDPAddr, ap netip.AddrPort) {
	pl.Retain()
	o.held[o.n] = pl
	o.iov[o.n][0], o.iov[o.n][1] = hdr, pl.b[:pl.n]
	o.msgs[o.n] = ipv4.Message{Buffers: o.iov[o.n][:2], Addr: to}
	o.peers[o.n] = ap
	o.n++
}

// payload returns the payload of the i-th datagram when it is a data packet, else nil.
func (o *outbox) payload(i int) []byte {
	if len(o.msgs[i].Buffers) < 2 {
		return nil
	}
	return o.iov[i][1]
}

// flush sends what the outbox holds and empties it.
func (o *outbox) flush(tr transport) error {
	if o.n == 0 {
		return nil
	}
	err := tr.writeBatch(o)
	o.reset()
	return err
}

// reset empties the outbox without sending, giving back its payload references.
func (o *outbox) reset() {
	for i := range o.n {
		if pl := o.held[i]; pl != nil {
			o.held[i] = nil
			pl.Release()
		}
		o.iov[i][1] = nil
	}
	o.n = 0
}

// udpTransport is a UDP socket with batched reads and writes.
type udpTransport struct {
	c  *net.UDPConn
	wr batchWriter
	rd batchReader
}

func newUDPTransport(c *net.UDPConn) (*udpTransport, error) {
	// Big socket buffers absorb bursts (the kernel caps them at its rmem_max/wmem_max).
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
	t := &udpTransport{c: c}
	wr, err := newBatchWriter(c)
	if err != nil {
		return nil, err
	}
	t.wr = wr
	rd, err := newBatchReader(c)
	if err != nil {
		return nil, err
	}
	t.rd = rd
	return t, nil
}

// socketBuffer is the SO_RCVBUF and SO_SNDBUF asked of the kernel, bytes.
const socketBuffer = 4 << 20

func (t *udpTransport) readBatch(ps []*packet) (int, error) { return t.rd.read(ps) }
func (t *udpTransport) lagging() bool                       { return t.rd.lagging() }
func (t *udpTransport) setIdleHook(fn func())               { t.rd.setIdleHook(fn) }

func (t *udpTransport) writeBatch(o *outbox) error { return t.wr.write(o) }

func (t *udpTransport) localAddr() net.Addr { return t.c.LocalAddr() }
func (t *udpTransport) close() error        { return t.c.Close() }

// batchWriter sends an outbox's datagrams, all of them or until an error.
type batchWriter interface {
	write(o *outbox) error
}

// batchReader reads datagrams into packets, and knows whether the socket holds datagrams
// not handled yet (see transport.lagging).
type batchReader interface {
	read(ps []*packet) (int, error)
	lagging() bool
	setIdleHook(fn func())
}
