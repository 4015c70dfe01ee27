package rtmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Server defaults.
const (
	// DefaultApp is the application name served when Server.App is empty.
	DefaultApp = "live"
	// DefaultReadTimeout ends a connection that sent nothing for 10 s (see Server.ReadTimeout).
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout ends a connection whose peer accepted nothing for 10 s.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultSetupTimeout ends a connection that neither publishes nor plays 10 s after it
	// was accepted: an encoder or player needs the handshake and four command round trips,
	// under 3 s even at a 600 ms round-trip time.
	DefaultSetupTimeout = 10 * time.Second
	// DefaultMaxConnections caps the connections a server serves at once (1000).
	DefaultMaxConnections = 1000
	// DefaultMaxConnectionsPerAddr caps the connections from one client address (100): a
	// tenth of the server, room for an office or a restream box behind one address.
	DefaultMaxConnectionsPerAddr = 100
)

// Server is an RTMP server on one TCP address. Encoders publish to
// rtmp://host:port/<App>/<key> and players play the same URL. Set the fields, then call Run;
// the fields must not change after that.
type Server struct {
	// ListenAddr is the TCP address to listen on, e.g. ":1935" or "127.0.0.1:0".
	ListenAddr string
	// App is the application name publishers and players must use. Default "live"; "*"
	// accepts any.
	App string
	// Registry receives publications under their key and serves players. Publish, when set,
	// is used for publications instead; without a Registry players are refused.
	Registry *stream.Registry
	// Publish attaches a publisher for a stream key. An error wrapping stream.ErrBusy is
	// answered with NetStream.Publish.BadName, any other with NetStream.Publish.Failed.
	Publish func(key string) (*stream.Publisher, error)
	// Publishers, when set, is told of every publishing session. Default: none.
	Publishers Publishers
	// PublishPassword, when set, is the secret a publisher gives as the password parameter
	// (PasswordParam) of its stream key's query, rtmp://host:port/live/cam1?password=SECRET,
	// or when the key has no password parameter, of the app's query (OBS's server field
	// rtmp://host:port/live?password=SECRET). The stream is published under the key without
	// its query. A publish without it or with another is refused with
	// NetStream.Publish.BadName, a second late. Default: anyone may publish.
	PublishPassword string
	// PlayPassword is PublishPassword for players, refused with NetStream.Play.Failed.
	// Default: anyone may play.
	PlayPassword string
	// Log receives connection events, never one per packet. Default slog.Default().
	Log *slog.Logger
	// ReadTimeout ends a connection that sent nothing for this long: during the handshake,
	// the commands and publishing. Players, which send almost nothing, are exempt once
	// playing. Default 10 s.
	ReadTimeout time.Duration
	// WriteTimeout ends a connection whose peer accepted nothing for this long. Default 10 s.
	WriteTimeout time.Duration
	// SetupTimeout ends a connection that has neither started publishing nor playing this
	// long after it was accepted, however it trickles bytes. Default 10 s.
	SetupTimeout time.Duration
	// MaxConnections bounds the connections served at once; more are closed when accepted.
	// Default 1000.
	MaxConnections int
	// MaxConnectionsPerAddr bounds the connections served at once from one client address
	// (IPv6: one /64); more are closed when accepted. Default 100.
	MaxConnectionsPerAddr int

	mu      sync.Mutex
	ready   chan struct{}
	addr    net.Addr
	ln      *connlimit.Listener
	running bool
	conns   map[*serverConn]struct{}
	// Refusals, a line a second at most of each kind: a client looping on its connections
	// makes one a connection.
	authLog, appLog, publishLog, playLog budget.LogLimit
}

// Publishers is told of a Server's publishing sessions: PublisherConnected when a publish
// command is accepted, PublisherDisconnected once the session ended, before its stream key is
// free for the next publisher. Each session gets exactly one of each, in that order, however
// short it is. streamID is the stream key; remoteAddr is the publisher's "host:port". The
// calls run on the connection's goroutine and must not block.
type Publishers interface {
	PublisherConnected(streamID, remoteAddr string)
	PublisherDisconnected(streamID, remoteAddr string)
}

// StreamInfo describes a stream being published to a Server.
type StreamInfo struct {
	// Key is the stream key: rtmp://host:port/live/<Key>.
	Key string
	// RemoteAddr is the publisher's address, host:port.
	RemoteAddr string
	// Since is when the publication started.
	Since time.Time
	// Bitrate is the media bitrate in kbit/s over the last 2 s.
	Bitrate float64
	// Readers counts the stream's readers: players, outputs, packagers.
	Readers int
}

// Ready returns a channel closed once the server listens (see Addr); it stays open if Run
// fails to listen.
func (s *Server) Ready() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	return s.ready
}

// Addr returns the address the server listens on, nil before it does.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// ActiveStreams returns the streams being published, sorted by key.
func (s *Server) ActiveStreams() []StreamInfo {
	s.mu.Lock()
	conns := make([]*serverConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	var list []StreamInfo
	for _, sc := range conns {
		if info, ok := sc.info(); ok {
			list = append(list, info)
		}
	}
	slices.SortFunc(list, func(a, b StreamInfo) int { return strings.Compare(a.Key, b.Key) })
	return list
}

// Run listens and serves until ctx ends, then closes every connection and returns nil once
// every goroutine it started has returned. It fails if it cannot listen. Run is called once.
func (s *Server) Run(ctx context.Context) error {
	if s.Publish == nil && s.Registry == nil {
		return fmt.Errorf("rtmp server %s: neither a Registry nor a Publish function", s.ListenAddr)
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("rtmp server %s: already running", s.ListenAddr)
	}
	s.running = true
	s.conns = make(map[*serverConn]struct{})
	s.mu.Unlock()

	var lc net.ListenConfig
	inner, err := lc.Listen(ctx, "tcp", s.ListenAddr)
	if err != nil {
		return fmt.Errorf("rtmp listen %s: %w", s.ListenAddr, err)
	}
	log := s.logger().With("rtmp_server", inner.Addr().String())
	ln := connlimit.Wrap(inner, connlimit.Limits{
		MaxConns:   orDefaultInt(s.MaxConnections, DefaultMaxConnections),
		MaxPerAddr: orDefaultInt(s.MaxConnectionsPerAddr, DefaultMaxConnectionsPerAddr),
	}, log)
	s.mu.Lock()
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	s.addr = ln.Addr()
	s.ln = ln
	close(s.ready)
	s.mu.Unlock()
	log.Info("rtmp: listening")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-stop:
		}
		_ = ln.Close()
	})
	s.acceptLoop(ctx, ln, &wg, log)
	close(stop)

	s.mu.Lock()
	for sc := range s.conns {
		sc.c.close()
	}
	s.mu.Unlock()
	wg.Wait()
	log.Info("rtmp: stopped")
	return nil
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, wg *sync.WaitGroup, log *slog.Logger) {
	backoff := 5 * time.Millisecond
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait and try again.
			log.Warn("rtmp: accept", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		// The listener keeps the connection caps: what it returns is within them.
		sc := newServerConn(s, nc, log)
		s.mu.Lock()
		s.conns[sc] = struct{}{}
		s.mu.Unlock()
		wg.Go(func() {
			sc.serve(ctx)
			s.mu.Lock()
			delete(s.conns, sc)
			s.mu.Unlock()
		})
	}
}

// checkApp tells whether connect's app name is served.
func (s *Server) checkApp(app string) bool {
	want := s.App
	if want == "" {
		want = DefaultApp
	}
	return want == "*" || app == want
}

// noteRefusal counts a refusal of l's kind and tells whether to log it, with the refusals the
// line stands for (budget.LogLimit).
func (s *Server) noteRefusal(l *budget.LogLimit) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return l.Note(time.Now(), 1)
}

// publish attaches a publisher for key.
func (s *Server) publish(key string) (*stream.Publisher, error) {
	if s.Publish != nil {
		return s.Publish(key)
	}
	return s.Registry.Publish(key)
}

// lookup finds the stream a player asks for.
func (s *Server) lookup(key string) (*stream.Stream, bool) {
	if s.Registry == nil {
		return nil, false
	}
	return s.Registry.Get(key)
}

func (s *Server) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// ConnStats returns the listener's connection counters: open, accepted, refused by cause.
// Zero before Run listens.
func (s *Server) ConnStats() connlimit.Stats {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return connlimit.Stats{}
	}
	return ln.Stats()
}

func orDefaultInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
