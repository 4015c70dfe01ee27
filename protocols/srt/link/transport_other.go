//go:build !linux

package link

import (
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
)

// sysBatch holds nothing here: the batch writer sends the outbox's messages as they are.
type sysBatch struct{}

// xnetWriter sends with golang.org/x/net's batch writes (sendmmsg where the system has it).
type xnetWriter struct {
	wr interface {
		WriteBatch(ms []ipv4.Message, flags int) (int, error)
	}
}

func newBatchWriter(c *net.UDPConn) (batchWriter, error) {
	if a, ok := c.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
		return xnetWriter{ipv6Writer(c)}, nil
	}
	return xnetWriter{ipv4.NewPacketConn(c)}, nil
}

func (w xnetWriter) write(o *outbox) error {
	ms := o.msgs[:o.n]
	for len(ms) > 0 {
		n, err := w.wr.WriteBatch(ms, 0)
		if err != nil {
			return err
		}
		ms = ms[n:]
	}
	return nil
}

// udpReader reads one datagram at a time where recvmmsg is not available. It cannot tell
// whether the socket holds unread datagrams, so it never reports lagging (the too-late drop
// then does not wait for the read loop).
type udpReader struct{ c *net.UDPConn }

func newBatchReader(c *net.UDPConn) (batchReader, error) { return udpReader{c}, nil }

func (r udpReader) read(ps []*packet) (int, error) {
	p := ps[0]
	n, from, err := r.c.ReadFromUDPAddrPort(p.buf[:])
	if err != nil {
		return 0, err
	}
	p.n, p.from = n, netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	return 1, nil
}

func (udpReader) lagging() bool      { return false }
func (udpReader) setIdleHook(func()) {}
