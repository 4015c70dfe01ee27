package rtsp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4"

	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Server defaults.
const (
	// DefaultReadTimeout drops a publisher that sent nothing for 10 s (ListenOptions.ReadTimeout).
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds each write to a connection: 10 s.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultSetupTimeout closes a connection that has no session playing or recording 10 s
	// after it was accepted (or after its last one ended): DESCRIBE, SETUP per media and
	// PLAY or RECORD take a few round trips.
	DefaultSetupTimeout = 10 * time.Second
	// DefaultMaxConnections caps the connections of a server (100): one publisher and its
	// readers.
	DefaultMaxConnections = 100
	// DefaultMaxConnectionsPerAddr caps the connections from one client address (10).
	DefaultMaxConnectionsPerAddr = 10
	// DefaultMaxSessions caps the sessions of a server (100). Sessions over UDP outlive their
	// connection by up to gortsplib's 60 s session timeout, so they are capped apart.
	DefaultMaxSessions = 100
	// DefaultMaxSessionsPerAddr caps the sessions of one client address (10).
	DefaultMaxSessionsPerAddr = 10
)

// writeQueueSize is how many RTP packets may wait for each reader (and each pushed
// connection): a key frame of a few hundred kilobytes is several hundred packets.
const writeQueueSize = 2048

// ListenOptions configure the RTSP listen input: Listen and NewServer.
type ListenOptions struct {
	// Addr is the TCP address of the RTSP port, such as ":8554" or "127.0.0.1:0". Required.
	Addr string
	// DisableUDP turns the UDP transport off: RTP then travels only interleaved in the RTSP
	// connection. Default false: UDP is on.
	DisableUDP bool
	// RTPPort is the even UDP port that receives and sends RTP for every session; RTCP uses
	// the next one. Default 0: a free pair of the system's ephemeral ports, bound on the host
	// of Addr.
	RTPPort int
	// ReadTimeout is how long a publisher may send nothing before it is dropped, and how long
	// one that announced may take to start recording before another may take its place.
	// Default 10 s.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write to a connection. Default 10 s.
	WriteTimeout time.Duration
	// SetupTimeout closes a connection that has no session playing or recording this long
	// after it was accepted, or after its last session ended, however it trickles bytes.
	// Default 10 s.
	SetupTimeout time.Duration
	// MaxConnections caps the connections open at once; more are closed when accepted.
	// Default 100.
	MaxConnections int
	// MaxConnectionsPerAddr caps the connections open at once from one client address (IPv6:
	// one /64). Default 10.
	MaxConnectionsPerAddr int
	// MaxSessions caps the sessions open at once; ANNOUNCE or SETUP past it is answered 503.
	// Default 100.
	MaxSessions int
	// MaxSessionsPerAddr caps the sessions open at once from one client address. Default 10.
	MaxSessionsPerAddr int
	// User and Password, when User is set, are the credentials publishers and readers must
	// give (basic or digest authentication). Default: none asked.
	User, Password string
	// Log receives the server's messages. Default slog.Default().
	Log *slog.Logger
}

// Server is an RTSP listen input: it accepts one ANNOUNCE/RECORD publisher at a time, on any
// path, and publishes what it sends into a Stream; a second publisher is refused with 503
// Service Unavailable until the first one leaves. While a publisher records, clients may
// DESCRIBE, SETUP and PLAY any path of the server to receive its RTP as it comes.
type Server struct {
	cfg ListenOptions
	log *slog.Logger

	ln       *guardListener
	rtpConn  *net.UDPConn // nil with DisableUDP
	rtcpConn *net.UDPConn

	mu   sync.Mutex
	used bool // Run or Close took the sockets
}

var _ stream.Source = (*Server)(nil)

// Listen is the INPUT_TYPE_RTSP_LISTEN input: an RTSP server on cfg.Addr, with UDP on a free pair
// of ports besides TCP, that publishes into s what one publisher at a time sends. It returns
// nil when ctx ends, and an error when it cannot listen or the server fails.
func Listen(ctx context.Context, s *stream.Stream, cfg ListenOptions) error {
	srv, err := NewServer(cfg)
	if err != nil {
		return err
	}
	return srv.Run(ctx, s)
}

// NewServer binds the server's sockets: the RTSP port and, unless disabled, the UDP pair. The
// server serves once Run is called; Close releases the sockets of one that never runs.
func NewServer(cfg ListenOptions) (*Server, error) {
	opt.Positive(&cfg.ReadTimeout, DefaultReadTimeout)
	opt.Positive(&cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.SetupTimeout = orDefault(cfg.SetupTimeout, DefaultSetupTimeout)
	cfg.MaxConnections = orDefault(cfg.MaxConnections, DefaultMaxConnections)
	cfg.MaxConnectionsPerAddr = orDefault(cfg.MaxConnectionsPerAddr, DefaultMaxConnectionsPerAddr)
	cfg.MaxSessions = orDefault(cfg.MaxSessions, DefaultMaxSessions)
	cfg.MaxSessionsPerAddr = orDefault(cfg.MaxSessionsPerAddr, DefaultMaxSessionsPerAddr)
	opt.Zero(&cfg.Log, slog.Default())
	inner, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rtsp listen %s: %w", cfg.Addr, err)
	}
	log := cfg.Log.With("rtsp_addr", inner.Addr().String())
	ln := &guardListener{
		Listener: connlimit.Wrap(inner, connlimit.Limits{MaxConns: cfg.MaxConnections, MaxPerAddr: cfg.MaxConnectionsPerAddr}, log),
		timeout:  cfg.SetupTimeout,
	}
	s := &Server{cfg: cfg, ln: ln, log: log}
	if !cfg.DisableUDP {
		host, _, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("rtsp listen %s: %w", cfg.Addr, err)
		}
		s.rtpConn, s.rtcpConn, err = listenUDPPair(host, cfg.RTPPort)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("rtsp listen %s: UDP: %w", cfg.Addr, err)
		}
	}
	return s, nil
}

// Addr returns the address of the RTSP port.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// ConnStats returns the RTSP port's connection counters: open, accepted, refused by cause.
func (s *Server) ConnStats() connlimit.Stats { return s.ln.Stats() }

// UDPPorts returns the RTP and RTCP ports, or zeros when UDP is disabled.
func (s *Server) UDPPorts() (rtp, rtcp int) {
	if s.rtpConn == nil {
		return 0, 0
	}
	return s.rtpConn.LocalAddr().(*net.UDPAddr).Port, s.rtcpConn.LocalAddr().(*net.UDPAddr).Port
}

// Close releases the sockets of a server that was never run. Run releases them itself.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used {
		return
	}
	s.used = true
	s.closeSockets()
}

func (s *Server) closeSockets() {
	s.ln.Close()
	if s.rtpConn != nil {
		s.rtpConn.Close()
		s.rtcpConn.Close()
	}
}

// Run serves until ctx ends, publishing into strm: each publisher is one publisher session of
// strm, and the next may come once one leaves. It returns nil when ctx ends and an error when
// the server fails. A Server runs once; its sockets are closed when Run returns.
func (s *Server) Run(ctx context.Context, strm *stream.Stream) error {
	s.mu.Lock()
	if s.used {
		s.mu.Unlock()
		return fmt.Errorf("rtsp server %s: already run or closed", s.ln.Addr())
	}
	s.used = true
	s.mu.Unlock()

	h := newHandler(strm, s.log, s.cfg.ReadTimeout, sessionLimits{
		maxSessions: s.cfg.MaxSessions, maxPerAddr: s.cfg.MaxSessionsPerAddr, setupTimeout: s.cfg.SetupTimeout})
	h.user, h.pass = s.cfg.User, s.cfg.Password
	srv := &gortsplib.Server{
		Handler:        h,
		RTSPAddress:    s.ln.Addr().String(),
		ReadTimeout:    s.cfg.ReadTimeout,
		WriteTimeout:   s.cfg.WriteTimeout,
		WriteQueueSize: writeQueueSize,
		Listen:         func(string, string) (net.Listener, error) { return s.ln, nil },
	}
	if s.rtpConn != nil {
		srv.UDPRTPAddress = s.rtpConn.LocalAddr().String()
		srv.UDPRTCPAddress = s.rtcpConn.LocalAddr().String()
		srv.ListenPacket = func(_, addr string) (net.PacketConn, error) {
			switch addr {
			case srv.UDPRTPAddress:
				return s.rtpConn, nil
			case srv.UDPRTCPAddress:
				return s.rtcpConn, nil
			}
			return nil, fmt.Errorf("unexpected UDP address %s", addr)
		}
	}
	h.srv = srv
	if err := srv.Start(); err != nil {
		s.closeSockets()
		return fmt.Errorf("rtsp server %s: %w", s.ln.Addr(), err)
	}
	rtpPort, rtcpPort := s.UDPPorts()
	s.log.Info("rtsp: listening", "udp_rtp_port", rtpPort, "udp_rtcp_port", rtcpPort)

	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	var err error
	select {
	case <-ctx.Done():
		srv.Close()
		<-done
	case err = <-done:
		err = fmt.Errorf("rtsp server %s: %w", s.ln.Addr(), err)
	}
	// Sessions were closed with the server; this catches a publisher whose close raced it.
	h.shutdown()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
