package connlimit

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
)

// errNoCloseWrite is CloseWrite's answer when the wrapped connection cannot half-close.
var errNoCloseWrite = errors.New("connlimit: connection cannot close its write side")

// Conn is a connection admitted by a Listener; closing it frees its slot once.
type Conn struct {
	net.Conn
	l     *Listener
	key   netip.Addr
	keyed bool
	once  sync.Once
}

func newConn(c net.Conn, l *Listener, key netip.Addr, keyed bool) *Conn {
	return &Conn{Conn: c, l: l, key: key, keyed: keyed}
}

// Close closes the connection and frees its slot; later calls return the wrapped Close's answer
// and free nothing.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key, c.keyed) })
	return err
}

// NetConn returns the wrapped connection (as tls.Conn does), for callers that need the
// concrete type; closing it directly does not free the slot.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// ReadFrom lets io.Copy into the connection use the wrapped connection's fast path (sendfile
// and splice on TCP).
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite half-closes the connection when the wrapped one can (TCP), as net/http does
// before closing a connection it answered with an error.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errNoCloseWrite
}
