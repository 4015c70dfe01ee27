package link

import (
	"net"
	"sync/atomic"
)

// memTransport is a transport without a socket: nothing arrives, what is written is counted.
// The fuzz target drives a mux through it by calling handle and service directly.
type memTransport struct {
	written atomic.Int64
	batches atomic.Int64
}

func (m *memTransport) readBatch([]*packet) (int, error) { select {} }
func (m *memTransport) writeBatch(o *outbox) error {
	m.written.Add(int64(o.n))
	m.batches.Add(1)
	return nil
}
func (m *memTransport) lagging() bool      { return false }
func (m *memTransport) setIdleHook(func()) {}
func (m *memTransport) localAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000}
}
func (m *memTransport) close() error { return nil }
