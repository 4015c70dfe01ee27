package tooling

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// portTries is how many ports Take probes before it gives up.
const portTries = 200

// Ports hands out loopback ports that are free on both TCP and UDP, never the same twice. The
// zero value is ready; it is safe for concurrent use.
type Ports struct {
	mu   sync.Mutex
	used map[int]bool
}

// Take returns a port that was free on TCP and UDP on 127.0.0.1 just now and that Take did not
// return before.
func (p *Ports) Take() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used == nil {
		p.used = map[int]bool{}
	}
	for range portTries {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p.used[port] {
			continue
		}
		pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		pc.Close()
		p.used[port] = true
		return port, nil
	}
	return 0, errors.New("find a free port: none free on both TCP and UDP after 200 tries")
}
