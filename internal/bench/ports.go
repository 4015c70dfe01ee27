package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
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

// listening reports whether /proc/net/<proto>{,6} has a listening socket on port.
func listening(proto string, port int) bool {
	for _, f := range []string{"/proc/net/" + proto, "/proc/net/" + proto + "6"} {
		if socketTableHas(f, proto, port) {
			return true
		}
	}
	return false
}

// socketTableHas scans one /proc/net socket table for a local port (TCP: in state LISTEN).
func socketTableHas(path, proto string, port int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if portListed(sc.Text(), proto, port) {
			return true
		}
	}
	return false
}

// portListed parses one line of a /proc/net socket table ("sl local_address rem_address st ...",
// addresses as HEXIP:HEXPORT; TCP state 0A is LISTEN).
func portListed(line, proto string, port int) bool {
	f := strings.Fields(line)
	if len(f) < 4 {
		return false
	}
	_, hexPort, ok := strings.Cut(f[1], ":")
	if !ok {
		return false
	}
	p, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || int(p) != port {
		return false
	}
	return proto != "tcp" || f[3] == "0A"
}
