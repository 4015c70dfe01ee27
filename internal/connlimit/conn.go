package connlimit

import (
	"errors"
	"io"
	"net"
	"net/netip"
)

// errNoCloseWrite is CloseWrite's answer when the wrapped connection cannot half-close.
var errNoCloseWrite = errors.New("connlimit: connection cannot close its write side")

// Conn is a connection admitted by a Listener; closing it frees its slot once.
type Conn struct {
	net.Conn
	l     *Listener
	key   netip.Addr
	keyed bool

	// The listener's mutex guards the rest.
	state    connState
	all      links // in the listener's idle list while idle
	sameAddr links // in its address's idle list while idle and keyed
}

func newConn(c net.Conn, l *Listener, key netip.Addr, keyed bool) *Conn {
	return &Conn{Conn: c, l: l, key: key, keyed: keyed}
}

// Close closes the connection and frees its slot; later calls return the wrapped Close's answer
// and free nothing.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.l.release(c)
	return err
}

// Idle says the connection holds no request now: between two requests, or before its first.
// With Limits.EvictIdle, a cap that is reached closes the connection idle the longest to admit
// a new one. An HTTP server calls it from its ConnState hook for StateNew and StateIdle.
func (c *Conn) Idle() { c.l.setIdle(c) }

// Busy says the connection serves a request now, so no cap closes it; an HTTP server calls it
// for StateActive and again before running a handler. It returns false when the connection was
// already closed to admit another (or by its owner): what was read from it must then be dropped
// unanswered, as if it had never arrived.
func (c *Conn) Busy() bool { return c.l.setBusy(c) }

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
