package testutil

import (
	"net"
	"testing"
)

// DialUDP returns a UDP socket connected to addr (host:port), closed when the test ends: the
// socket of a peer a test drives by hand.
func DialUDP(t testing.TB, addr string) *net.UDPConn {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
