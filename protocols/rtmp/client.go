package rtmp

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Client timeouts.
const (
	dialTimeout   = 10 * time.Second
	clientTimeout = 10 * time.Second
)

// client is the client side of a connection, up to the created message stream.
type client struct {
	c   *conn
	t   target
	log *slog.Logger
	txn float64
}

// tlsConfig is the TLS configuration of rtmps:// connections: nil checks the server's
// certificate against the system's roots and the URL's host. Tests set their own roots.
var tlsConfig *tls.Config

// dial connects to t (over TLS for rtmps://) and runs the handshake.
func dial(ctx context.Context, t target, log *slog.Logger) (*client, error) {
	d := net.Dialer{Timeout: dialTimeout}
	var nc net.Conn
	var err error
	if t.TLS {
		td := tls.Dialer{NetDialer: &d, Config: tlsConfig}
		nc, err = td.DialContext(ctx, "tcp", t.Addr)
	} else {
		nc, err = d.DialContext(ctx, "tcp", t.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", t.Addr, err)
	}
	cl := &client{c: newConn(nc, clientTimeout, clientTimeout), t: t, log: log, txn: 1}
	if err := cl.c.handshake(false); err != nil {
		cl.c.close()
		return nil, fmt.Errorf("%s: %w", t.Addr, err)
	}
	return cl, nil
}

// watch closes the connection when ctx ends; the returned stop waits for the watcher.
func watch(ctx context.Context, c *conn) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			c.close()
		case <-done:
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// call sends a command on stream 0 and waits for its _result, which it returns.
func (cl *client) call(name string, args ...any) (command, error) {
	cl.txn++
	txn := cl.txn
	if err := cl.c.writeCommand(csidCommand, 0, name, txn, args...); err != nil {
		return command{}, err
	}
	for {
		msg, err := cl.c.readMessage()
		if err != nil {
			return command{}, fmt.Errorf("waiting for the answer to %s: %w", name, err)
		}
		if msg.Type != msgCommandAMF0 && msg.Type != msgCommandAMF3 {
			continue
		}
		cmd, err := parseCommand(msg)
		if err != nil {
			return command{}, err
		}
		if cmd.Txn != txn || (cmd.Name != "_result" && cmd.Name != "_error") {
			continue
		}
		if cmd.Name == "_error" {
			_, code, desc := cmd.status()
			return cmd, fmt.Errorf("%s: %s %s: %w", name, code, desc, ErrRefused)
		}
		return cmd, nil
	}
}

// connect connects to the application.
func (cl *client) connect() error {
	if err := cl.c.setChunkSize(outChunkSize); err != nil {
		return err
	}
	cl.txn = 0 // connect is transaction 1
	_, err := cl.call("connect", amfObj{
		{"app", cl.t.App}, {"type", "nonprivate"}, {"flashVer", "FMLE/3.0 (compatible; sluice)"},
		{"tcUrl", cl.t.TCURL}, {"fpad", false}, {"capabilities", 15}, {"audioCodecs", 3575},
		{"videoCodecs", 252}, {"videoFunction", 1}, {"objectEncoding", 0},
		{"fourCcList", []any{"avc1", "hvc1"}},
	})
	if err != nil {
		return err
	}
	return cl.c.writeControl(msgWinAckSize, ackWindow)
}

// createStream creates a message stream and returns its ID.
func (cl *client) createStream() (uint32, error) {
	res, err := cl.call("createStream", nil)
	if err != nil {
		return 0, err
	}
	id, ok := value[float64](res.Args, 1)
	if !ok || id < 1 || id > 1<<20 {
		return 0, fmt.Errorf("createStream: stream ID %v: %w", res.Args, ErrMalformed)
	}
	return uint32(id), nil
}

// statusError returns the error of an onStatus command with level "error", nil otherwise.
func statusError(cmd command) error {
	level, code, desc := cmd.status()
	if level != levelError {
		return nil
	}
	return fmt.Errorf("%s %s: %w", code, desc, ErrRefused)
}
