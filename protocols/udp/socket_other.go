//go:build !linux

package udp

import (
	"net"
	"syscall"
)

// setReadBuffer asks for a receive buffer of n bytes; it reports 0 (unknown) here.
func setReadBuffer(c *net.UDPConn, n int) int {
	_ = c.SetReadBuffer(n)
	return 0
}

// multicastControl leaves the interface and TTL of multicast to the system here.
func multicastControl(net.IP, int) func(network, address string, c syscall.RawConn) error {
	return nil
}
