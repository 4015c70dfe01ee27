package connlimit

import (
	"net"
	"sync"
)

// chanListener hands out the connections pushed into it, so the unit tests choose each peer's
// address without sockets.
type chanListener struct {
	conns  chan net.Conn
	once   sync.Once
	closed chan struct{}
}

func newChanListener() *chanListener {
	return &chanListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// addrConn is one end of a pipe that reports a chosen remote address and whether it was closed.
type addrConn struct {
	net.Conn
	remote net.Addr
	mu     sync.Mutex
	closes int
}

func (c *addrConn) RemoteAddr() net.Addr { return c.remote }

func (c *addrConn) Close() error {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	return c.Conn.Close()
}

func (c *addrConn) closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes > 0
}

func pipeFrom(ip string) *addrConn {
	a, b := net.Pipe()
	_ = b.Close()
	return &addrConn{Conn: a, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
}
