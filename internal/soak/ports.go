package soak

import (
	"fmt"
	"net"
)

// Ports hands out loopback ports that are free on both TCP and UDP, never the same twice.
type Ports struct {
	used map[int]bool
}

// Take returns a port that was free on TCP and UDP just now and that Take did not return before.
func (p *Ports) Take() (int, error) {
	if p.used == nil {
		p.used = map[int]bool{}
	}
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p.used[port] {
			continue
		}
		pc, err := net.ListenPacket("udp", fmt.Sprintf(":%d", port))
		if err != nil {
			continue
		}
		pc.Close()
		p.used[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("find a free port: none free on both TCP and UDP after 200 tries")
}
