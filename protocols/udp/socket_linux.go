//go:build linux

package udp

import (
	"net"
	"syscall"
)

// setReadBuffer asks for a receive buffer of n bytes; past net.core.rmem_max it tries
// SO_RCVBUFFORCE, which needs CAP_NET_ADMIN. It returns the size the kernel granted (Linux
// reports twice the usable size, for its bookkeeping).
func setReadBuffer(c *net.UDPConn, n int) int {
	_ = c.SetReadBuffer(n)
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	got := 0
	_ = raw.Control(func(fd uintptr) {
		got, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if got < n {
			if syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n) == nil {
				got, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
			}
		}
	})
	return got
}

// multicastControl returns a Dialer Control that, before the socket connects, sends
// multicast out of the interface with address ifAddr (when not nil) with the given TTL. The
// interface must be set before connect: the route is chosen then.
func multicastControl(ifAddr net.IP, ttl int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if ip4 := ifAddr.To4(); ip4 != nil {
				serr = syscall.SetsockoptInet4Addr(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, [4]byte(ip4))
				if serr != nil {
					return
				}
			}
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_TTL, ttl)
		})
		if err != nil {
			return err
		}
		return serr
	}
}
