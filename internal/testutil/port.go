package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
)

// Test ports come from below the kernel's ephemeral range (32768–60999 on Linux): a port the
// kernel handed out to a ":0" listener goes back to the pool the moment it is closed, and an
// outgoing connection of any process (ffmpeg, an HTTP client, another test package running at
// the same time) may take it as its local port before the test binds it. Ports in this range
// are never given to outgoing connections.
const (
	portLow  = 20000
	portHigh = 32767
)

var (
	portsMu sync.Mutex
	given   = map[int]bool{} // ports this test binary handed out already
)

// FreePort returns a port that is free for TCP and UDP on every interface now, that this
// process has not handed out before, and that no outgoing connection will take meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := portLow + rand.IntN(portHigh-portLow+1)
		if given[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			continue
		}
		pc, err := net.ListenPacket("udp", fmt.Sprintf(":%d", p))
		l.Close()
		if err != nil {
			continue
		}
		pc.Close()
		given[p] = true
		return p
	}
	t.Fatal("no free port")
	return 0
}
