//go:build !linux

package link

import (
	"net"
	"net/netip"
)

// udpReader reads one datagram at a time where recvmmsg is not available.
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
