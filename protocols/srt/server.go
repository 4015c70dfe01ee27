package srt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/srt/link"
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
	// MaxConns bounds the connections served at once (publishers and receivers); more are
	// refused at the handshake (libsrt's 3, resource). Default link.DefaultMaxConns (1000).
	MaxConns int
	// Publishers, when set, is told of every publisher session. Default: none.
	Publishers Publishers
	// Log receives connection events. Default slog.Default().
	Log *slog.Logger
}

// Publishers is told of a Server's publisher sessions: PublisherConnected when a publisher's
// connection is served, PublisherDisconnected once it ended, before its stream name is free
// for the next publisher. Each session gets exactly one of each, in that order, however short
// it is. streamID is the stream id the publisher sent; remoteAddr is its "ip:port". The calls
// must not block: they run on the server's accept loop and on the session's goroutine.
type Publishers interface {
	PublisherConnected(streamID, remoteAddr string)
	PublisherDisconnected(streamID, remoteAddr string)
}

// Server is the SRT server module: encoders publish MPEG-TS into a stream.Registry under the
// stream name of their stream id, and receivers read it back as MPEG-TS, relayed as the
// publisher sent it (see relay). A name has at most one publisher; another is refused at the
// handshake.
type Server struct {
	cfg  ServerConfig
	slug string
	reg  *stream.Registry
	log  *slog.Logger
	ln   *link.Listener

	closeOnce sync.Once
	sessions  sync.WaitGroup
	rejects   rateLog

	mu      sync.Mutex
	pending map[*link.Request]admitted // decided on the socket's loop, not yet accepted
	pubs    map[string]*pubSession     // by stream name
	relays  map[string]*relay          // by stream name, while it has a publisher or receivers
}

// admitted is what decide reserved for a caller it let in.
type admitted struct {
	id  StreamID
	pub *stream.Publisher // for a publisher: the stream name, taken
}

// pubSession is one publisher's connection.
type pubSession struct {
	conn     *link.Conn
	evict    context.CancelFunc // ends the session (evictSilent)
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
	conf.MaxConns = cfg.MaxConns
	s := &Server{
		cfg:     cfg,
		slug:    Slug(cfg.Name),
		reg:     reg,
		pending: make(map[*link.Request]admitted),
		pubs:    make(map[string]*pubSession),
		relays:  make(map[string]*relay),
	}
	conf.Log = cfg.Log.With("srt_server", cfg.Name)
	ln, err := link.Listen(cfg.Addr, conf, s.decide)
	if err != nil {
		return nil, fmt.Errorf("srt server %q: listen %s: %w", cfg.Name, cfg.Addr, err)
	}
	s.ln = ln
	s.log = cfg.Log.With("srt_server", cfg.Name, "addr", ln.Addr().String())
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
	var err error
	for {
		conn, req, aerr := s.ln.Accept(ctx)
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, link.ErrClosed) {
				err = aerr
			}
			break
		}
		s.mu.Lock()
		a, ok := s.pending[req]
		delete(s.pending, req)
		s.mu.Unlock()
		if !ok {
			_ = conn.Close()
			continue
		}
		if a.id.Mode == ModePublish {
			s.servePublisher(ctx, conn, a)
		} else {
			s.serveReceiver(ctx, conn, a)
		}
	}
	s.Close()
	cancel()
	s.sessions.Wait()
	s.log.Info("srt server stopped")
	if err != nil {
		return fmt.Errorf("srt server %q on %s: %w", s.cfg.Name, s.cfg.Addr, err)
	}
	return nil
}

// Close closes the listener and every connection, and gives back what was reserved for
// callers not yet served. Run returns soon after. Idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		_ = s.ln.Close()
		s.mu.Lock()
		for req, a := range s.pending {
			if a.pub != nil {
				a.pub.Close()
			}
			delete(s.pending, req)
		}
		s.mu.Unlock()
	})
}

// decide accepts or rejects one caller, reserving its stream name when it publishes. It runs
// on the socket's read loop and must not block.
func (s *Server) decide(req *link.Request) link.Reject {
	addr := req.RemoteAddr().String()
	id, err := ParseStreamID(req.StreamID(), s.cfg.PublisherPrefix, s.cfg.ReceiverPrefix)
	if err != nil {
		return s.reject(req, link.RejectXBadRequest, addr, err.Error())
	}
	if id.Server != "" && id.Server != s.slug {
		return s.reject(req, link.RejectXNotFound, addr, fmt.Sprintf("stream id %q names server %q, not %q", req.StreamID(), id.Server, s.slug))
	}
	a := admitted{id: id}
	if id.Mode == ModePublish {
		pub, err := s.reg.Publish(id.Name)
		if err != nil {
			reason := link.RejectXISE
			if errors.Is(err, stream.ErrBusy) {
				reason = link.RejectXConflict
				s.evictSilent(id.Name, addr)
			}
			return s.reject(req, reason, addr, err.Error())
		}
		a.pub = pub
	} else if strm, ok := s.reg.Get(id.Name); !ok || !strm.Publishing() {
		return s.reject(req, link.RejectXNotFound, addr, "stream "+id.Name+" is not published")
	}
	s.mu.Lock()
	s.pending[req] = a
	s.mu.Unlock()
	return link.RejectNone
}

// takeoverSilence is how long a publisher must have sent nothing at all (no media, no
// keep-alive: a live SRT peer sends one a second when it has nothing else) for a new publisher
// of its stream to close it. An encoder that restarts, or a publisher killed without a
// shutdown, leaves a session the server would otherwise hold until the peer-idle timeout
// (5 s by default), refusing the encoder's new connection all that time.
const takeoverSilence = 2 * time.Second

// evictSilent closes the publisher of stream name when it has been silent for takeoverSilence:
// the caller that asked (from addr) is refused this time (1409, as libsrt callers expect while
// the name is held) and gets the name on its next try, once the old session has let go. A
// publisher that is alive is never closed for another. It runs on the socket's read loop and
// does not block: the session's own goroutine closes the connection.
func (s *Server) evictSilent(name, addr string) {
	s.mu.Lock()
	old := s.pubs[name]
	s.mu.Unlock()
	if old == nil {
		return
	}
	if silent := old.conn.Silence(); silent >= takeoverSilence {
		s.log.Info("silent publisher closed for a new one", "stream", name, "peer", old.addr, "silent", silent.Round(time.Millisecond), "new_peer", addr)
		old.evict()
	}
}

// reject logs a refusal, at most once a second, and returns its reason.
func (s *Server) reject(req *link.Request, reason link.Reject, addr, why string) link.Reject {
	s.rejects.note("srt connection refused", "peer", addr, "stream_id", req.StreamID(), "reason", why, "code", reason.String())
	return reason
}

// relayLocked returns the relay of a stream name, made on first use; s.mu is held.
func (s *Server) relayLocked(name string) *relay {
	rl := s.relays[name]
	if rl == nil {
		rl = &relay{}
		s.relays[name] = rl
	}
	return rl
}

// dropRelayLocked forgets a stream's relay once it has neither publisher nor receivers; s.mu
// is held.
func (s *Server) dropRelayLocked(name string) {
	if rl := s.relays[name]; rl != nil && s.pubs[name] == nil && rl.receivers() == 0 {
		delete(s.relays, name)
	}
}
