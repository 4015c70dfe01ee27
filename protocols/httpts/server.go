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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Defaults of ServerOptions.
const (
	DefaultIdleTimeout       = 5 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
)

// ServerOptions tune a Server. The zero value uses the defaults.
type ServerOptions struct {
	// Host is the local IP address Listen binds; default empty, every local address.
	Host string
	// IdleTimeout ends a publisher that sends nothing for this long; default 5 s.
	IdleTimeout time.Duration
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
// program; 405 for other methods; 409 while another publisher sends; 415 for a program
// without a supported codec.
type Server struct {
	s    *stream.Stream
	idle time.Duration
	log  *slog.Logger

	busy    atomic.Bool
	mu      sync.Mutex
	closing bool
	active  sync.WaitGroup // requests being served
}

var _ http.Handler = (*Server)(nil)

// NewServer returns a Server publishing into s.
func NewServer(s *stream.Stream, opts ServerOptions) *Server {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Server{s: s, idle: opts.IdleTimeout, log: opts.Log.With("input", "http")}
}

// Listen serves a new Server for s on the TCP port, on opts.Host (every local address by
// default), until ctx ends
// (then nil); it fails when the port cannot be bound.
func Listen(ctx context.Context, port int, s *stream.Stream, opts ServerOptions) error {
	var lc net.ListenConfig
	addr := net.JoinHostPort(opts.Host, strconv.Itoa(port))
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("http listen %s: %w", addr, err)
	}
	return NewServer(s, opts).Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx ends, then closes ln and every connection and
// returns nil once every request has finished. It fails when accepting fails.
func (srv *Server) Serve(ctx context.Context, ln net.Listener) error {
	log := srv.log.With("addr", ln.Addr().String())
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
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
		http.Error(w, "publish MPEG-TS with POST or PUT", http.StatusMethodNotAllowed)
		return
	}
	if !srv.enter() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	defer srv.active.Done()
	if !srv.busy.CompareAndSwap(false, true) {
		http.Error(w, "another publisher is sending", http.StatusConflict)
		return
	}
	defer srv.busy.Store(false)
	log := srv.log.With("remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	rc := http.NewResponseController(w)
	body := idleReader{r: r.Body, arm: func() { _ = rc.SetReadDeadline(time.Now().Add(srv.idle)) }}
	start := time.Now()
	units, err := ingestBody(body, srv.s, log)
	code, msg := status(err)
	log.Info("publisher done", "units", units, "took", time.Since(start).Round(time.Millisecond), "status", code, "error", err)
	if code == http.StatusOK {
		w.WriteHeader(code)
		return
	}
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
