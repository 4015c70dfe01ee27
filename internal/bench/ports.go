package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
)

var (
	portMu   sync.Mutex
	portUsed = map[int]bool{} // ports handed out in this run of the bench, never twice
)

// freePort returns a loopback port free on both TCP and UDP now, not handed out before.
func freePort() (int, error) {
	portMu.Lock()
	defer portMu.Unlock()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if portUsed[p] {
			continue
		}
		pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		pc.Close()
		portUsed[p] = true
		return p, nil
	}
	return 0, errors.New("free port: none found in 200 tries")
}

// waitListening waits until some process listens on port (proto "tcp" or "udp"), read from
// /proc/net, so that a one-shot listener such as `ffmpeg -listen 1` is not probed.
func waitListening(ctx context.Context, proto string, port int) error {
	for {
		if listening(proto, port) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s port %d to listen: %w", proto, port, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// listening reports whether /proc/net/<proto>{,6} has a socket on port: for TCP in LISTEN, for
// UDP in any state.
func listening(proto string, port int) bool {
	socks, err := procfs.Sockets(proto)
	if err != nil {
		return false
	}
	for _, s := range socks {
		if s.Port == port && (proto != "tcp" || s.State == procfs.TCPListen) {
			return true
		}
	}
	return false
}
