// Package httpts carries MPEG-TS (and FLV) over HTTP: a server that accepts a stream
// published by POST or PUT, a client that pulls a continuous stream by GET, and an output that
// sends one by a chunked POST or PUT.
package httpts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Defaults of ServerOptions.
const (
	// DefaultIdleTimeout ends a publisher whose body stops moving for 5 s.
	DefaultIdleTimeout = 5 * time.Second
	// DefaultReadHeaderTimeout bounds the reading of a request's headers: 10 s.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultMaxConnections caps the connections of a listen input (16): one publishes, the
	// others are answered 409 or 405.
	DefaultMaxConnections = 16
	// DefaultMaxConnectionsPerAddr caps the connections from one client address (4): the
	// publisher, its reconnection while the old one times out, and a probe.
	DefaultMaxConnectionsPerAddr = 4
	// DefaultKeepAliveTimeout closes a connection idle between requests after 10 s.
	DefaultKeepAliveTimeout = 10 * time.Second
)

// Server limits that are not options.
const (
	// maxHeaderBytes caps a request's header block (16 KiB, bytes): encoders send a few
	// hundred bytes of headers.
	maxHeaderBytes = 16 << 10
	// answerTimeout bounds the writing of the short answer after a body: 10 s.
	answerTimeout = 10 * time.Second
)

// ServerOptions tune a Server. The zero value uses the defaults.
type ServerOptions struct {
	// Addr is where Listen binds: host:port as net.Listen takes it; an empty host is every
	// local address, port 0 any free port. Required by Listen: an empty Addr fails. NewServer
	// does not use it.
	Addr string
	// IdleTimeout ends a publisher whose body brings less than 4 KiB in this long (one that
	// stopped or trickles); default 5 s. A live body of any real rate lasts for ever.
	IdleTimeout time.Duration
	// ReadHeaderTimeout bounds the reading of a request's headers; default 10 s.
	ReadHeaderTimeout time.Duration
	// KeepAliveTimeout closes a connection idle between requests; default 10 s.
	KeepAliveTimeout time.Duration
	// MaxConnections caps the connections open at once; more are closed when accepted.
	// Default 16.
	MaxConnections int
	// MaxConnectionsPerAddr caps the connections open at once from one client address (IPv6:
	// one /64). Default 4.
	MaxConnectionsPerAddr int
	// Password, when set, is required of a publisher: as the password query parameter
	// (PasswordParam) or the password of HTTP Basic auth, any user. A request without it, or
	// with another, is answered 401 with a Basic challenge after a second, before whether
	// another publisher is live is checked.
	Password string
	// Log receives publisher starts and ends; default slog.Default().
	Log *slog.Logger
}

// Server accepts MPEG-TS (or FLV, detected) sent by POST or PUT, chunked or not, on any path,
// and publishes it into one Stream (INPUT_TYPE_HTTP_LISTEN), e.g. from
// `ffmpeg -f mpegts http://host:port/`. One publisher at a time: another one meanwhile gets
// 409 Conflict. When a body ends the publisher session ends; the next request starts a new
// one (a discontinuity for readers).
//
// Answers: 200 after a body that carried media; 400 for a body without an MPEG-TS or FLV
// program; 401 without the Password when one is set; 405 for other methods; 409 while another publisher sends; 415 for a program
// without a supported codec.
type Server struct {
	s    *stream.Stream
	idle time.Duration
	opts ServerOptions
	log  *slog.Logger

	ln atomic.Pointer[connlimit.Listener] // while Serve runs

	busy    atomic.Bool
	mu      sync.Mutex
	closing bool
	authLog budget.LogLimit // password refusals; under mu
	active  sync.WaitGroup  // requests being served
}

var _ http.Handler = (*Server)(nil)

// NewServer returns a Server publishing into s.
func NewServer(s *stream.Stream, opts ServerOptions) *Server {
	opt.Positive(&opts.IdleTimeout, DefaultIdleTimeout)
	opts.ReadHeaderTimeout = orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	opts.KeepAliveTimeout = orDefault(opts.KeepAliveTimeout, DefaultKeepAliveTimeout)
	opts.MaxConnections = orDefault(opts.MaxConnections, DefaultMaxConnections)
	opts.MaxConnectionsPerAddr = orDefault(opts.MaxConnectionsPerAddr, DefaultMaxConnectionsPerAddr)
	opt.Zero(&opts.Log, slog.Default())
	return &Server{s: s, idle: opts.IdleTimeout, opts: opts, log: opts.Log.With("input", "http")}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// ConnStats returns the connection counters of the listener Serve runs on: open, accepted,
// refused by cause. Zero when Serve is not running.
func (srv *Server) ConnStats() connlimit.Stats {
	if ln := srv.ln.Load(); ln != nil {
		return ln.Stats()
	}
	return connlimit.Stats{}
}

// Listen serves a new Server for s on opts.Addr until ctx ends (then nil); it fails when
// opts.Addr is empty or the port cannot be bound.
func Listen(ctx context.Context, s *stream.Stream, opts ServerOptions) error {
	var lc net.ListenConfig
	addr := opts.Addr
	if addr == "" {
		return errors.New("http listen: no address (ServerOptions.Addr is empty; want host:port, :0 for any free port)")
	}
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("http listen %s: %w", addr, err)
	}
	return NewServer(s, opts).Serve(ctx, ln)
}

// Serve accepts connections on ln, within the connection caps, until ctx ends, then closes ln
// and every connection and returns nil once every request has finished. It fails when
// accepting fails.
func (srv *Server) Serve(ctx context.Context, ln net.Listener) error {
	log := srv.log.With("addr", ln.Addr().String())
	cl := connlimit.Wrap(ln, connlimit.Limits{MaxConns: srv.opts.MaxConnections, MaxPerAddr: srv.opts.MaxConnectionsPerAddr}, log)
	srv.ln.Store(cl)
	defer srv.ln.Store(nil)
	ln = cl
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: srv.opts.ReadHeaderTimeout,
		// No ReadTimeout or WriteTimeout: a live body lasts for ever; progressReader keeps it
		// moving and answerTimeout bounds the answer.
		IdleTimeout:    srv.opts.KeepAliveTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	log.Info("listening")
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("http serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	srv.mu.Lock()
	srv.closing = true
	srv.mu.Unlock()
	_ = hs.Close() // closes the connections: bodies being read fail
	if err == nil {
		<-served
	}
	srv.active.Wait()
	return err
}

// ServeHTTP publishes the request's body.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.Header().Set("Allow", "POST, PUT")
		srv.refuse(w, "publish MPEG-TS with POST or PUT", http.StatusMethodNotAllowed)
		return
	}
	if !srv.enter() {
		srv.refuse(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	defer srv.active.Done()
	if why := checkPassword(srv.opts.Password, r); why != "" {
		srv.refuseAuth(r.Context(), w, r, why)
		return
	}
	if !srv.busy.CompareAndSwap(false, true) {
		srv.refuse(w, "another publisher is sending", http.StatusConflict)
		return
	}
	defer srv.busy.Store(false)
	log := srv.log.With("remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	rc := http.NewResponseController(w)
	body := newProgressReader(r.Body, func() { _ = rc.SetReadDeadline(time.Now().Add(srv.idle)) })
	start := time.Now()
	units, err := ingestBody(body, srv.s, log)
	code, msg := status(err)
	log.Info("publisher done", "units", units, "took", time.Since(start).Round(time.Millisecond), "status", code, "error", err)
	_ = rc.SetWriteDeadline(time.Now().Add(answerTimeout))
	if code == http.StatusOK {
		w.WriteHeader(code)
		return
	}
	http.Error(w, msg, code)
}

// refuse answers a request without reading its body. net/http reads what is left of an unread
// body (up to 256 KiB) before it answers, and the server has no read deadline after the
// headers: that read gets the idle timeout, and the answer answerTimeout, so that a refused
// client whose body stops cannot hold its connection (and one of the few slots) for ever.
func (srv *Server) refuse(w http.ResponseWriter, msg string, code int) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(srv.idle))
	_ = rc.SetWriteDeadline(time.Now().Add(answerTimeout))
	http.Error(w, msg, code)
}

// enter counts a request in, unless the server is closing.
func (srv *Server) enter() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		return false
	}
	srv.active.Add(1)
	return true
}

// status maps the result of a body to an HTTP status and message.
func status(err error) (int, string) {
	switch {
	case err == nil:
		return http.StatusOK, ""
	case errors.Is(err, stream.ErrBusy):
		return http.StatusConflict, "the stream has another publisher"
	case errors.Is(err, mpegts.ErrNoTracks):
		return http.StatusUnsupportedMediaType, err.Error()
	case errors.Is(err, ErrNoMedia):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusBadRequest, err.Error()
}
