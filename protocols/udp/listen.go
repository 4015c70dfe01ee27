package udp

import (
	"context"
	"errors"
	"fmt"
	"net"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Listen receives MPEG-TS datagrams on opts.Addr and publishes
// them into s (INPUT_TYPE_UDP_LISTEN). A publisher session starts with the first datagram of
// whole sync-aligned TS packets (bare or in RTP) and ends after opts.IdleTimeout without
// one; the next datagram starts a new session. Other datagrams are ignored. Listen returns nil
// when ctx ends, or an error when opts.Addr is empty, the port cannot be bound or s is closed.
func Listen(ctx context.Context, s *stream.Stream, opts Options) error {
	opts = opts.withDefaults()
	addr := opts.Addr
	if addr == "" {
		return errors.New("udp listen: no address (Options.Addr is empty; want host:port, :0 for any free port)")
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return fmt.Errorf("udp listen %s: %w", addr, err)
	}
	conn := pc.(*net.UDPConn)
	defer conn.Close()
	log := opts.Log.With("input", "udp", "addr", conn.LocalAddr().String())
	granted := setReadBuffer(conn, opts.ReadBuffer)
	log.Info("listening", "read_buffer", granted)
	r := &receiver{conn: conn, s: s, log: log, idle: opts.IdleTimeout}
	return r.run(ctx)
}

// Pull receives MPEG-TS from a udp:// URL and publishes it into s (INPUT_TYPE_UDP_URL):
//
//	udp://@:1234, udp://:1234, udp://0.0.0.0:1234   the port on every local address
//	udp://239.1.2.3:1234                             joins the multicast group
//
// A unicast host is ignored, as ffmpeg does. Options honoured in the query:
//
//	localaddr=IP      join the group on the interface that has this address
//	interface=NAME    join the group on this interface (e.g. eth1); default the kernel's choice
//	buffer_size=N     socket receive buffer in bytes (default opts.ReadBuffer, 4 MiB)
//	fifo_size=N       the same in 188-byte packets (ffmpeg's unit), when buffer_size is absent
//	timeout=N         microseconds without a datagram after which Pull returns (none by default)
//	sources=IP[,IP]   a multicast group's senders to receive from (source-specific join)
//	block=IP[,IP]     a multicast group's senders to drop
//
// Other options (ffmpeg's reuse, overrun_nonfatal, ...) are logged as ignored.
//
// Sessions run as in Listen. Pull returns nil when ctx ends or, with timeout set, when the
// input went quiet after media flowed; an error when nothing came within the timeout or the
// socket cannot be opened.
func Pull(ctx context.Context, s *stream.Stream, opts Options) error {
	opts = opts.withDefaults()
	rawurl := opts.URL
	ep, err := parseURL(rawurl, "udp")
	if err != nil {
		return fmt.Errorf("udp pull: %w", err)
	}
	where := redact.URL(rawurl)
	conn, err := listenEndpoint(ep)
	if err != nil {
		return fmt.Errorf("udp pull %s: %w", where, err)
	}
	defer conn.Close()
	readBuffer := opts.ReadBuffer
	if ep.readBuffer > 0 {
		readBuffer = ep.readBuffer
	}
	log := opts.Log.With("input", "udp", "url", where)
	if ignored := ep.unused("localaddr", "interface", "buffer_size", "fifo_size", "timeout", "sources", "block"); ignored != nil {
		log.Info("options ignored: they change nothing on a udp input", "options", ignored)
	}
	granted := setReadBuffer(conn, readBuffer)
	log.Info("receiving", "addr", conn.LocalAddr().String(), "read_buffer", granted)
	r := &receiver{conn: conn, s: s, log: log, idle: opts.IdleTimeout, quiet: ep.timeout}
	return r.run(ctx)
}

// listenEndpoint binds the port, joining the group of a multicast address.
func listenEndpoint(ep endpoint) (*net.UDPConn, error) {
	if !ep.multicast() {
		laddr := &net.UDPAddr{Port: ep.port}
		if ep.localAddr != nil {
			laddr.IP = ep.localAddr
		}
		return net.ListenUDP("udp", laddr)
	}
	ifi, err := ep.interfaceOf()
	if err != nil {
		return nil, err
	}
	network := "udp4"
	if ep.ip.To4() == nil {
		network = "udp6"
	}
	// The socket binds the port on every address (SO_REUSEADDR), so that several inputs can
	// join groups on one port, and joins the group on ifi (nil: the kernel's choice).
	conn, err := net.ListenMulticastUDP(network, ifi, &net.UDPAddr{IP: ep.ip, Port: ep.port})
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", ep.ip, err)
	}
	if err := filterSources(conn, ep, ifi); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// groupConn is what ipv4 and ipv6 PacketConns offer for source filters.
type groupConn interface {
	LeaveGroup(ifi *net.Interface, group net.Addr) error
	JoinSourceSpecificGroup(ifi *net.Interface, group, source net.Addr) error
	ExcludeSourceSpecificGroup(ifi *net.Interface, group, source net.Addr) error
}

// filterSources applies the sources or block option to conn, joined to the group: with
// sources, the any-source membership is swapped for one per source (source-specific
// multicast); with block, the senders listed are excluded.
func filterSources(conn *net.UDPConn, ep endpoint, ifi *net.Interface) error {
	if ep.sources == nil && ep.block == nil {
		return nil
	}
	var gc groupConn = ipv4.NewPacketConn(conn)
	if ep.ip.To4() == nil {
		gc = ipv6.NewPacketConn(conn)
	}
	group := &net.UDPAddr{IP: ep.ip}
	if ep.sources != nil {
		if err := gc.LeaveGroup(ifi, group); err != nil {
			return fmt.Errorf("leave %s for its sources: %w", ep.ip, err)
		}
	}
	for _, src := range ep.sources {
		if err := gc.JoinSourceSpecificGroup(ifi, group, &net.UDPAddr{IP: src}); err != nil {
			return fmt.Errorf("join %s from source %s: %w", ep.ip, src, err)
		}
	}
	for _, src := range ep.block {
		if err := gc.ExcludeSourceSpecificGroup(ifi, group, &net.UDPAddr{IP: src}); err != nil {
			return fmt.Errorf("block source %s of %s: %w", src, ep.ip, err)
		}
	}
	return nil
}
