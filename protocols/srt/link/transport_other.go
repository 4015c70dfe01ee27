//go:build !linux

package link

import (
	"net"
	"net/netip"
)

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
