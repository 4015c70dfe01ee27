package rtsp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/bluenviron/gortsplib/v4"

	"github.com/sluicemedia/sluice/internal/stream"
)

// Server defaults.
const (
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 10 * time.Second
)

// writeQueueSize is how many RTP packets may wait for each reader (and each pushed
// connection): a key frame of a few hundred kilobytes is several hundred packets.
const writeQueueSize = 2048

// ServerConfig configures a Server.
type ServerConfig struct {
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
	cfg ServerConfig
	log *slog.Logger

	ln       net.Listener
	rtpConn  *net.UDPConn // nil with DisableUDP
	rtcpConn *net.UDPConn

	mu   sync.Mutex
	used bool // Run or Close took the sockets
}

var _ stream.Source = (*Server)(nil)

// Listen is the INPUT_TYPE_RTSP_LISTEN input: an RTSP server on addr, with UDP on a free pair
// of ports besides TCP, that publishes into s what one publisher at a time sends. It returns
// nil when ctx ends, and an error when it cannot listen or the server fails.
func Listen(ctx context.Context, addr string, s *stream.Stream, log *slog.Logger) error {
	srv, err := NewServer(ServerConfig{Addr: addr, Log: log})
	if err != nil {
		return err
	}
	return srv.Run(ctx, s)
}

// NewServer binds the server's sockets: the RTSP port and, unless disabled, the UDP pair. The
// server serves once Run is called; Close releases the sockets of one that never runs.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rtsp listen %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, ln: ln, log: cfg.Log.With("rtsp_addr", ln.Addr().String())}
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

	h := newHandler(strm, s.log, s.cfg.ReadTimeout)
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
