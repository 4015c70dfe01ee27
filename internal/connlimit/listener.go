package connlimit

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// logEvery is the shortest interval between two refusal log lines of one listener (1 s); the
// refusals in between are counted and reported in the next line.
const logEvery = time.Second

// Limits are the caps of one listener. Zero (the default) in a field means no cap.
type Limits struct {
	// MaxConns caps the connections open at once on the listener (connections; 0 = no cap).
	MaxConns int
	// MaxPerAddr caps the connections open at once from one client address (connections;
	// 0 = no cap). IPv6 peers are counted per /64 prefix.
	MaxPerAddr int
}

// Cause says which cap refused a connection.
type Cause int

const (
	// CauseMaxConns is a refusal because the listener held MaxConns connections.
	CauseMaxConns Cause = iota
	// CauseMaxPerAddr is a refusal because the client's address held MaxPerAddr connections.
	CauseMaxPerAddr
)

// String names the cause as the logs and metrics do.
func (c Cause) String() string {
	switch c {
	case CauseMaxConns:
		return "max_conns"
	case CauseMaxPerAddr:
		return "max_per_addr"
	}
	return "unknown"
}

// Stats are a listener's counters at one moment.
type Stats struct {
	// Open is the number of admitted connections not yet closed.
	Open int
	// Addrs is the number of client addresses (IPv6: /64 prefixes) with an open connection.
	Addrs int
	// Accepted counts the connections admitted since Wrap.
	Accepted uint64
	// RefusedMaxConns counts the connections closed at once because of MaxConns.
	RefusedMaxConns uint64
	// RefusedMaxPerAddr counts the connections closed at once because of MaxPerAddr.
	RefusedMaxPerAddr uint64
}

// Refused is the total of refused connections, whatever the cause.
func (s Stats) Refused() uint64 { return s.RefusedMaxConns + s.RefusedMaxPerAddr }

// Listener is a net.Listener that enforces Limits; build it with Wrap.
type Listener struct {
	net.Listener
	lim Limits
	log *slog.Logger

	mu      sync.Mutex
	open    int
	perAddr map[netip.Addr]int
	stats   Stats
	lastLog time.Time
	// unlogged counts the refusals since the last log line, by cause.
	unlogged [2]uint64
}

var _ net.Listener = (*Listener)(nil)

// Wrap returns ln guarded by lim. A nil log discards the refusal lines. Negative limits count as
// no cap.
func Wrap(ln net.Listener, lim Limits, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lim.MaxConns = max(lim.MaxConns, 0)
	lim.MaxPerAddr = max(lim.MaxPerAddr, 0)
	return &Listener{
		Listener: ln,
		lim:      lim,
		log:      log.With("listen", ln.Addr().String()),
		perAddr:  make(map[netip.Addr]int),
	}
}

// Limits returns the caps the listener enforces.
func (l *Listener) Limits() Limits { return l.lim }

// Accept waits for the next connection within the caps. Connections past a cap are closed and
// counted here and never returned; an error of the wrapped listener is returned as it is.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, keyed := addrKey(c.RemoteAddr())
		cause, ok := l.admit(key, keyed)
		if ok {
			return newConn(c, l, key, keyed), nil
		}
		_ = c.Close()
		l.refused(cause, c.RemoteAddr())
	}
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Open = l.open
	s.Addrs = len(l.perAddr)
	return s
}

// admit takes a slot for a connection from key, or says which cap refuses it.
func (l *Listener) admit(key netip.Addr, keyed bool) (Cause, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.MaxConns > 0 && l.open >= l.lim.MaxConns {
		l.stats.RefusedMaxConns++
		return CauseMaxConns, false
	}
	if keyed && l.lim.MaxPerAddr > 0 && l.perAddr[key] >= l.lim.MaxPerAddr {
		l.stats.RefusedMaxPerAddr++
		return CauseMaxPerAddr, false
	}
	l.open++
	if keyed {
		l.perAddr[key]++
	}
	l.stats.Accepted++
	return 0, true
}

// release frees the slot admit took; the connection calls it once.
func (l *Listener) release(key netip.Addr, keyed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if !keyed {
		return
	}
	if n := l.perAddr[key] - 1; n > 0 {
		l.perAddr[key] = n
	} else {
		delete(l.perAddr, key)
	}
}

// refused logs a refusal, at most one line per logEvery; the line carries the refusals it
// stands for.
func (l *Listener) refused(cause Cause, remote net.Addr) {
	now := time.Now()
	l.mu.Lock()
	l.unlogged[cause]++
	if !l.lastLog.IsZero() && now.Sub(l.lastLog) < logEvery {
		l.mu.Unlock()
		return
	}
	l.lastLog = now
	byConns, byAddr := l.unlogged[CauseMaxConns], l.unlogged[CauseMaxPerAddr]
	l.unlogged = [2]uint64{}
	open := l.open
	l.mu.Unlock()
	l.log.Warn("connection refused: cap reached",
		"cause", cause.String(), "remote", remote.String(), "open", open,
		"max_conns", l.lim.MaxConns, "max_per_addr", l.lim.MaxPerAddr,
		"refused_max_conns", byConns, "refused_max_per_addr", byAddr)
}

// AddrKey is the address a peer is counted under by the per-address cap: its IP,
// IPv4-mapped addresses as IPv4, IPv6 masked to /64. ok is false when the peer has no IP.
// Servers that count something else per client (sessions, logins) use it to agree with the
// listener.
func AddrKey(a net.Addr) (key netip.Addr, ok bool) { return addrKey(a) }

// addrKey is AddrKey.
func addrKey(a net.Addr) (netip.Addr, bool) {
	var ip netip.Addr
	switch v := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	default:
		if a == nil {
			return netip.Addr{}, false
		}
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}, false
		}
		ip = ap.Addr()
	}
	if !ip.IsValid() {
		return netip.Addr{}, false
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, err := ip.Prefix(64)
		if err != nil {
			return netip.Addr{}, false
		}
		ip = p.Addr()
	}
	return ip, true
}
