//go:build !linux

package link

import (
	"net"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ipv6Writer batches writes on an IPv6 (or dual-stack) socket.
type ipv6BatchWriter struct{ pc *ipv6.PacketConn }

func ipv6Writer(c *net.UDPConn) ipv6BatchWriter { return ipv6BatchWriter{ipv6.NewPacketConn(c)} }

// WriteBatch sends ms in a batch; ipv4.Message and ipv6.Message are the same type.
func (w ipv6BatchWriter) WriteBatch(ms []ipv4.Message, flags int) (int, error) {
	return w.pc.WriteBatch(ms, flags)
}
