// Package httpserve is how every sluice HTTP server is built: the timeouts of a request's
// headers, body and writes (a download lives as long as it keeps moving), HTTP/2's limits on
// the HTTPS ports, the idle marks that let a capped listener (connlimit) evict idle
// connections, and a TLS certificate reloaded when its files change.
package httpserve

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/internal/connlimit"
)

// Limits are the timeouts of one kind of HTTP server (the API port, a player's port, the
// debug port). A request body is read under Body as a whole, except a streaming upload, which
// must bring minUploadProgress bytes within every ReadStall; every write of a response must
// complete within WriteStall, so a long download lives as long as it keeps moving.
type Limits struct {
	// Header bounds reading a request's headers, from its first byte (or the connection's
	// start). Default 10 s.
	Header time.Duration
	// Body bounds reading a whole request body that is not a streaming upload, from the end of
	// its headers. API bodies are at most 1 MiB: 10 s asks for 100 KB/s. Default 10 s.
	Body time.Duration
	// Idle closes a keep-alive connection that sends no new request for this long. Default 60 s.
	Idle time.Duration
	// WriteStall is how long one write of a response (at most writeChunk bytes) may block on a
	// client that does not read; each write moves the deadline. Default 30 s.
	WriteStall time.Duration
	// ReadStall is how long a streaming upload may take to bring minUploadProgress more bytes;
	// that much progress moves the deadline. Default 30 s.
	ReadStall time.Duration
}

// Defaults of Limits.
const (
	httpHeaderTimeout = 10 * time.Second
	httpBodyTimeout   = 10 * time.Second
	httpIdleTimeout   = 60 * time.Second
	httpWriteStall    = 30 * time.Second
	httpReadStall     = 30 * time.Second
)

// writeChunk is the most bytes written under one write deadline (256 KiB): a response write
// larger than that is cut, so that each piece must move within WriteStall (a client must read
// at least 256 KiB per 30 s, about 70 kbit/s, to keep a download).
const writeChunk = 256 << 10

// HTTP/2 limits of the HTTPS ports (--tls-cert): what one HTTP/2 connection may hold beyond an
// HTTP/1.1 one. The timeouts above and the connection caps (connlimit) hold as they are.
const (
	// h2MaxStreams is how many requests one HTTP/2 connection may have in flight (16): a
	// low-latency viewer holds 2 to 4 (a blocking playlist reload and a preload hint per
	// rendition, a segment), a console page its event stream and a few reads. Past it a
	// client queues its requests.
	h2MaxStreams = 16
	// h2MaxFrame is the largest frame a client may send (16 KiB, HTTP/2's least): its buffer is
	// allocated when the frame's header is read, so it is kept to what HTTP/1.1 reads at once.
	h2MaxFrame = 16 << 10
	// h2ReceiveBuffer is the request body bytes a client may send ahead of the handler, per
	// connection and per stream (256 KiB, the flow-control windows): memory follows what was
	// sent, up to this. 256 KiB a round trip is 100 Mbit/s at 20 ms.
	h2ReceiveBuffer = 256 << 10
	// httpMaxHeaderBytes caps a request's headers, HTTP/1.1 and HTTP/2 alike (1 MiB,
	// net/http's default); more answers 431.
	httpMaxHeaderBytes = http.DefaultMaxHeaderBytes
)

// Defaults are the limits of every sluice HTTP server.
func Defaults() Limits {
	return Limits{
		Header: httpHeaderTimeout, Body: httpBodyTimeout, Idle: httpIdleTimeout,
		WriteStall: httpWriteStall, ReadStall: httpReadStall,
	}
}

// New returns a server for h with lim's timeouts. upload, when set, tells which
// requests are streaming uploads (their body is read under ReadStall per read instead of
// Body as a whole).
func New(h http.Handler, lim Limits, upload func(*http.Request) bool, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler: &deadlines{next: h, lim: lim, upload: upload},
		// No ReadTimeout or WriteTimeout: they bound a whole request and response, which a
		// download must not have, and a ReadTimeout that passes while a handler still runs
		// cancels the request's context. deadlines sets them per request instead.
		// It also bounds a TLS handshake (net/http's tlsHandshakeTimeout is the least of the
		// positive timeouts).
		ReadHeaderTimeout: lim.Header,
		IdleTimeout:       lim.Idle,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		// Used only on TLS connections that chose h2 (no h2c: Protocols stays the default).
		// IdleTimeout closes an HTTP/2 connection with no stream open; WriteByteTimeout is the
		// write stall of the connection as a whole (a client that reads nothing at all), each
		// stream's writes keeping their own deadline (deadlines).
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          h2MaxStreams,
			MaxReadFrameSize:              h2MaxFrame,
			MaxReceiveBufferPerConnection: h2ReceiveBuffer,
			MaxReceiveBufferPerStream:     h2ReceiveBuffer,
			WriteByteTimeout:              lim.WriteStall,
		},
		ErrorLog:    slog.NewLogLogger(log.With("part", "http").Handler(), slog.LevelDebug),
		ConnState:   markIdle,
		ConnContext: withConn,
	}
}

// markIdle tells a capped listener (connlimit, with EvictIdle) which of its connections hold
// no request: a new one until its first request's headers are read, and a kept-alive one
// between requests. A cap that is reached closes the one idle the longest to admit a new
// client, so idle connections cannot lock others out. A connection serving a request is
// never closed for another; the header, body and write deadlines bound how long it may take.
//
// On an HTTP/2 connection net/http reports it idle while it has no stream open and active
// while it has one; the connection is the TLS one, over the capped listener's.
func markIdle(c net.Conn, st http.ConnState) {
	lc, ok := plainConn(c).(*connlimit.Conn)
	if !ok {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		lc.Idle()
	case http.StateActive:
		lc.Busy()
	}
}

// connKey is the request context's key of the connection a request came on.
type connKey struct{}

// withConn puts a capped listener's connection in its requests' context, for deadlines.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := plainConn(c).(*connlimit.Conn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// deadlines sets each request's read and write deadlines.
type deadlines struct {
	next   http.Handler
	lim    Limits
	upload func(*http.Request) bool
}

func (d *deadlines) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if lc, ok := r.Context().Value(connKey{}).(*connlimit.Conn); ok && !lc.Busy() {
		// The connection was closed to admit another client after this request's headers
		// were read and before it turned active: nobody waits for an answer, and the request
		// must not act. net/http drops the connection without logging.
		panic(http.ErrAbortHandler)
	}
	rc := http.NewResponseController(w)
	if r.Body != nil && r.Body != http.NoBody {
		if d.upload != nil && d.upload(r) {
			// A first deadline before any read: a handler that answers without reading the
			// body leaves net/http to read what is left of it (up to 256 KiB), which would
			// otherwise wait for the client without end.
			_ = rc.SetReadDeadline(time.Now().Add(d.lim.ReadStall))
			r.Body = &stallReader{ReadCloser: r.Body, rc: rc, stall: d.lim.ReadStall}
		} else {
			// net/http lifts the deadline once the body hit EOF, before it reads ahead on
			// the connection while the handler runs (where a passing deadline would cancel
			// the request's context).
			_ = rc.SetReadDeadline(time.Now().Add(d.lim.Body))
		}
	}
	d.next.ServeHTTP(&stallWriter{ResponseWriter: w, rc: rc, stall: d.lim.WriteStall}, r)
	// What the handler left buffered is sent after it returns.
	_ = rc.SetWriteDeadline(time.Now().Add(d.lim.WriteStall))
}

// minUploadProgress is the least a streaming upload must bring within each ReadStall (4 KiB,
// about 1 kbit/s at 30 s): the deadline moves only with that much progress, so that an upload
// trickling a byte at a time is cut like one that stopped (each read used to move it, and a
// byte every 29 s held a busy connection, which no newcomer evicts, for ever).
const minUploadProgress = 4 << 10

// stallReader moves a streaming upload's read deadline by ReadStall each time minUploadProgress
// more bytes arrived.
type stallReader struct {
	io.ReadCloser
	rc    *http.ResponseController
	stall time.Duration
	since int // bytes read since the deadline last moved
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if s.since += n; s.since >= minUploadProgress {
		s.since = 0
		_ = s.rc.SetReadDeadline(time.Now().Add(s.stall))
	}
	return n, err
}

// stallWriter moves the write deadline before each write of at most writeChunk bytes.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

func (s *stallWriter) extend() { _ = s.rc.SetWriteDeadline(time.Now().Add(s.stall)) }

func (s *stallWriter) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		s.extend()
		m, err := s.ResponseWriter.Write(p[:min(len(p), writeChunk)])
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// ReadFrom copies src in pieces of writeChunk, each under its own deadline. Each piece still
// goes through the connection's ReadFrom, so a file (or a limited file, as ServeContent
// passes) is still sent with sendfile.
func (s *stallWriter) ReadFrom(src io.Reader) (int64, error) {
	lr, limited := src.(*io.LimitedReader)
	if !limited {
		lr = &io.LimitedReader{R: src, N: math.MaxInt64}
	}
	var total int64
	piece := &io.LimitedReader{R: lr.R}
	for lr.N > 0 {
		piece.N = min(lr.N, writeChunk)
		want := piece.N
		s.extend()
		n, err := io.Copy(s.ResponseWriter, piece)
		total += n
		lr.N -= n
		if err != nil || n < want {
			return total, err // err nil: src ended
		}
	}
	return total, nil
}

// Flush sends what is buffered, under a fresh deadline.
func (s *stallWriter) Flush() {
	s.extend()
	_ = s.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
