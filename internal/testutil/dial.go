package testutil

import (
	"net"
	"testing"
	"time"
)

// DialFrom connects over TCP to addr from the loopback source address src (any of 127.0.0.0/8
// works on Linux), as a client on another address would, within 10 s; the connection is
// closed when the test ends.
func DialFrom(t testing.TB, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
