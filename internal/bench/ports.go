package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/tooling"
)

// ports hands out the bench's ports: free on TCP and UDP now, never the same twice in a run.
var ports tooling.Ports

// freePort returns a loopback port free on both TCP and UDP now, not handed out before.
func freePort() (int, error) { return ports.Take() }

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
