package cluster

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy forwards loopback TCP connections to a server; paused, it forwards nothing (bytes are
// dropped, new connections wait): a network partition between one node and the database.
type proxy struct {
	ln     net.Listener
	target string
	paused atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

// startProxy forwards a new loopback port to target until t ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// addr is the proxy's address.
func (p *proxy) addr() string { return p.ln.Addr().String() }

// accept serves connections until the listener closes.
func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, dropping what arrives while paused.
func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 && !p.paused.Load() {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

// close ends the listener and every connection, and waits for the goroutines.
func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
