package srt

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	gosrt "github.com/datarhei/gosrt"

	"github.com/sluicemedia/sluice/internal/stream"
)

// ServerConfig configures an SRT server module.
type ServerConfig struct {
	// Name is the server name (server_name); stream ids address it by Slug(Name).
	Name string
	// Addr is the UDP address to listen on, e.g. ":9000".
	Addr string
	// Options: Latency (server_latency, default 200 ms), Passphrase (server_passphrase, none
	// by default), PBKeyLen (server_pbkeylen), MaxBW (server_maxbw, bytes/s, -1 unlimited, per
	// receiver), PeerIdleTimeout (server_timeout, default 5 s). StreamID and ConnectTimeout are
	// not used.
	Options
	// PublisherPrefix and ReceiverPrefix start the stream ids of publishers and receivers.
	// Defaults "publisher" and "receiver".
	PublisherPrefix, ReceiverPrefix string
	// Log receives connection events. Default slog.Default().
	Log *slog.Logger
}

// Server is the SRT server module: encoders publish MPEG-TS into a stream.Registry under the
// stream name of their stream id, and receivers read it back as MPEG-TS. A name has at most one
// publisher; another is refused at the handshake.
type Server struct {
	cfg  ServerConfig
	slug string
	reg  *stream.Registry
	log  *slog.Logger
	ln   gosrt.Listener

	closeOnce sync.Once
	sessions  sync.WaitGroup
	rejects   rateLog

	mu        sync.Mutex
	pubs      map[string]*pubSession // by stream name
	receivers map[string]int         // SRT receivers by stream name
}

// pubSession is one publisher's connection.
type pubSession struct {
	conn     gosrt.Conn
	strm     *stream.Stream
	streamID string
	addr     string
	since    time.Time
}

// NewServer validates cfg and binds its UDP address; the Server serves once Run is called.
// Call Run, or Close when Run will not be called, to release the socket.
func NewServer(cfg ServerConfig, reg *stream.Registry) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.PublisherPrefix == "" {
		cfg.PublisherPrefix = DefaultPublisherPrefix
	}
	if cfg.ReceiverPrefix == "" {
		cfg.ReceiverPrefix = DefaultReceiverPrefix
	}
	if cfg.PublisherPrefix == cfg.ReceiverPrefix {
		return nil, fmt.Errorf("srt server %q: publisher and receiver prefixes are both %q", cfg.Name, cfg.PublisherPrefix)
	}
	conf, err := cfg.config()
	if err != nil {
		return nil, fmt.Errorf("srt server %q: %w", cfg.Name, err)
	}
	ln, err := gosrt.Listen("srt", cfg.Addr, conf)
	if err != nil {
		return nil, fmt.Errorf("srt server %q: listen %s: %w", cfg.Name, cfg.Addr, err)
	}
	s := &Server{
		cfg:       cfg,
		slug:      Slug(cfg.Name),
		reg:       reg,
		log:       cfg.Log.With("srt_server", cfg.Name, "addr", ln.Addr().String()),
		ln:        ln,
		pubs:      make(map[string]*pubSession),
		receivers: make(map[string]int),
	}
	s.rejects.log = s.log
	return s, nil
}

// Addr returns the UDP address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Slug returns the server slug that stream ids name.
func (s *Server) Slug() string { return s.slug }

// Run serves until ctx ends, then closes the listener and every connection and returns once
// all of its goroutines have ended. It returns nil after ctx ended or Close, and an error when
// the socket fails.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.log.Info("srt server listening", "slug", s.slug)
	errc := make(chan error, 1)
	go func() { errc <- acceptLoop(s.ln, func(req gosrt.ConnRequest) { s.decide(ctx, req) }) }()
	var err error
	select {
	case <-ctx.Done():
		s.Close()
		err = <-errc
	case err = <-errc:
		s.Close()
	}
	cancel()
	s.sessions.Wait()
	s.log.Info("srt server stopped")
	if err != nil {
		return fmt.Errorf("srt server %q on %s: %w", s.cfg.Name, s.cfg.Addr, err)
	}
	return nil
}

// Close closes the listener and every connection. Run returns soon after. Idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(s.ln.Close)
}

// decide accepts or rejects one handshake. It must not block: gosrt runs every handshake on
// the accept loop.
func (s *Server) decide(ctx context.Context, req gosrt.ConnRequest) {
	addr := req.RemoteAddr().String()
	id, err := ParseStreamID(req.StreamId(), s.cfg.PublisherPrefix, s.cfg.ReceiverPrefix)
	if err != nil {
		s.reject(req, gosrt.REJX_BAD_REQUEST, addr, err.Error())
		return
	}
	if id.Server != "" && id.Server != s.slug {
		s.reject(req, gosrt.REJX_NOTFOUND, addr, fmt.Sprintf("stream id %q names server %q, not %q", req.StreamId(), id.Server, s.slug))
		return
	}
	if reason, ok := checkPassphrase(req, s.cfg.Passphrase); !ok {
		s.reject(req, reason, addr, "passphrase mismatch")
		return
	}
	log := s.log.With("stream", id.Name, "peer", addr)
	if id.Mode == ModePublish {
		s.acceptPublisher(ctx, req, id, log)
	} else {
		s.acceptReceiver(ctx, req, id, log)
	}
}

// reject refuses a handshake and logs it, at most once a second.
func (s *Server) reject(req gosrt.ConnRequest, reason gosrt.RejectionReason, addr, why string) {
	req.Reject(reason)
	s.rejects.note("srt connection refused", "peer", addr, "stream_id", req.StreamId(), "reason", why)
}
