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

	"github.com/sluicemedia/sluice/internal/stream"
)

// Server defaults.
const (
	DefaultApp            = "live"
	DefaultReadTimeout    = 10 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultMaxConnections = 1000
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
	// Logger receives connection events, never one per packet. Default slog.Default().
	Logger *slog.Logger
	// ReadTimeout ends a connection that sent nothing for this long: during the handshake,
	// the commands and publishing. Players, which send almost nothing, are exempt once
	// playing. Default 10 s.
	ReadTimeout time.Duration
	// WriteTimeout ends a connection whose peer accepted nothing for this long. Default 10 s.
	WriteTimeout time.Duration
	// MaxConnections bounds the connections served at once; more are closed when accepted.
	// Default 1000.
	MaxConnections int

	mu      sync.Mutex
	ready   chan struct{}
	addr    net.Addr
	running bool
	conns   map[*serverConn]struct{}
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
	ln, err := lc.Listen(ctx, "tcp", s.ListenAddr)
	if err != nil {
		return fmt.Errorf("rtmp listen %s: %w", s.ListenAddr, err)
	}
	s.mu.Lock()
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	s.addr = ln.Addr()
	close(s.ready)
	s.mu.Unlock()
	log := s.logger().With("rtmp_server", ln.Addr().String())
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
	var refused int64
	var refusedAt time.Time
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
		s.mu.Lock()
		full := len(s.conns) >= s.maxConnections()
		var sc *serverConn
		if !full {
			sc = newServerConn(s, nc, log)
			s.conns[sc] = struct{}{}
		}
		s.mu.Unlock()
		if full {
			_ = nc.Close()
			if refused++; time.Since(refusedAt) >= 10*time.Second {
				refusedAt = time.Now()
				log.Warn("rtmp: connections refused: limit reached", "max_connections", s.maxConnections(), "total", refused)
			}
			continue
		}
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
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Server) maxConnections() int {
	if s.MaxConnections > 0 {
		return s.MaxConnections
	}
	return DefaultMaxConnections
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
