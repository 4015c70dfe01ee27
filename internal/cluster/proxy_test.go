package cluster

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

// proxy forwards loopback TCP connections to a server; paused, it forwards nothing (bytes are
// dropped, new connections wait): a network partition between one node and the database.
// strand drops the bytes of the connections open now only, as when the database moved to
// another host and the old one went silent: new connections reach the server.
type proxy struct {
	ln       net.Listener
	target   string
	paused   atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
	stranded []*atomic.Bool // one a connection, set by strand
	wg       sync.WaitGroup
}

// strand drops, from now on, every byte of the connections open now.
func (p *proxy) strand() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stranded {
		s.Store(true)
	}
}

// proxiedDatabase is a new database (its URL, and its store) and a proxy to its server: the
// proxied URL reaches the database through px, connecting with a timeout (connections through
// a paused proxy must not wait forever on the way in).
func proxiedDatabase(t *testing.T) (direct, proxied string, st *storage.Store, px *proxy) {
	t.Helper()
	direct, st = database(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	px = startProxy(t, u.Host)
	u.Host = px.addr()
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	return direct, u.String(), st, px
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
		stranded := new(atomic.Bool)
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.stranded = append(p.stranded, stranded)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c, stranded)
		go p.pipe(c, up, stranded)
	}
}

// pipe copies src to dst, dropping what arrives while paused or once stranded.
func (p *proxy) pipe(dst, src net.Conn, stranded *atomic.Bool) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 && !p.paused.Load() && !stranded.Load() {
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
