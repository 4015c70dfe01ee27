package rtsp

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/connlimit"
)

// guardListener hands gortsplib connections that must start playing or recording within the
// setup timeout. gortsplib v4 leaves a connection without a read deadline until it records
// over TCP, so without this a client that sends nothing, or a byte now and then, would hold
// its connection for ever.
type guardListener struct {
	*connlimit.Listener
	timeout time.Duration
}

// Accept returns the next connection within the caps, with its setup deadline running.
func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	g := &guardConn{Conn: c}
	g.by.Store(time.Now().Add(l.timeout).UnixNano())
	return g, nil
}

// guardConn is a connection of the server. Until a session of it plays or records, every read
// ends at the setup deadline; while one does, gortsplib's own timeouts apply (ReadTimeout per
// read while recording over TCP, the session timeout over UDP, WriteTimeout for readers).
type guardConn struct {
	net.Conn
	// by is the setup deadline in Unix nanoseconds; 0 while a session plays or records.
	by atomic.Int64
}

// Read reads with the setup deadline, if one runs. gortsplib reads from one goroutine per
// connection, and that goroutine waits while a request is handled, so the deadline set here
// cannot outlive a stream() made by the handler during the request.
func (c *guardConn) Read(p []byte) (int, error) {
	if by := c.by.Load(); by != 0 {
		_ = c.SetReadDeadline(time.Unix(0, by))
	}
	return c.Conn.Read(p)
}

// stream lifts the setup deadline: a session of the connection plays or records.
func (c *guardConn) stream() {
	c.by.Store(0)
	_ = c.SetReadDeadline(time.Time{})
}

// rearm starts a new setup deadline: the connection's session ended, and the connection must
// start another or go.
func (c *guardConn) rearm(timeout time.Duration) {
	by := time.Now().Add(timeout)
	c.by.Store(by.UnixNano())
	_ = c.SetReadDeadline(by)
}
