package connlimit

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// logEvery is the shortest interval between two refusal log lines of one listener (1 s), and
// between two eviction lines; the events in between are counted and reported in the next line.
const logEvery = time.Second

// Limits are the caps of one listener. Zero (the default) in a field means no cap.
type Limits struct {
	// MaxConns caps the connections open at once on the listener (connections; 0 = no cap).
	MaxConns int
	// MaxPerAddr caps the connections open at once from one client address (connections;
	// 0 = no cap). IPv6 peers are counted per /64 prefix.
	MaxPerAddr int
	// EvictIdle admits a connection past a cap by closing the connection idle the longest
	// (Conn.Idle): of the same address when MaxPerAddr is reached, of any address when
	// MaxConns is. Only when none is idle is the new one refused. Default off: it needs a
	// server that tells its idle connections (an HTTP server through ConnState); without one
	// no connection is ever idle.
	EvictIdle bool
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
	// Idle is the number of open connections marked idle (Conn.Idle).
	Idle int
	// Addrs is the number of client addresses (IPv6: /64 prefixes) with an open connection.
	Addrs int
	// Accepted counts the connections admitted since Wrap.
	Accepted uint64
	// RefusedMaxConns counts the connections closed at once because of MaxConns.
	RefusedMaxConns uint64
	// RefusedMaxPerAddr counts the connections closed at once because of MaxPerAddr.
	RefusedMaxPerAddr uint64
	// EvictedMaxConns counts the idle connections closed to admit another past MaxConns.
	EvictedMaxConns uint64
	// EvictedMaxPerAddr counts the idle connections closed to admit another of their address
	// past MaxPerAddr.
	EvictedMaxPerAddr uint64
}

// Refused is the total of refused connections, whatever the cause.
func (s Stats) Refused() uint64 { return s.RefusedMaxConns + s.RefusedMaxPerAddr }

// Evicted is the total of idle connections closed to admit others, whatever the cause.
func (s Stats) Evicted() uint64 { return s.EvictedMaxConns + s.EvictedMaxPerAddr }

// Listener is a net.Listener that enforces Limits; build it with Wrap.
type Listener struct {
	net.Listener
	lim Limits
	log *slog.Logger

	mu      sync.Mutex
	open    int
	perAddr map[netip.Addr]*peer
	// idle lists every idle connection, the longest idle first.
	idle    idleList
	nIdle   int
	stats   Stats
	refusal rateLog
	evict   rateLog
}

// rateLog counts events by cause between two log lines at most logEvery apart.
type rateLog struct {
	last     time.Time
	unlogged [2]uint64
}

// note counts one event and says whether to log now, with the counts since the last line.
func (r *rateLog) note(cause Cause, now time.Time) (log bool, byConns, byAddr uint64) {
	r.unlogged[cause]++
	if !r.last.IsZero() && now.Sub(r.last) < logEvery {
		return false, 0, 0
	}
	r.last = now
	byConns, byAddr = r.unlogged[CauseMaxConns], r.unlogged[CauseMaxPerAddr]
	r.unlogged = [2]uint64{}
	return true, byConns, byAddr
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
		perAddr:  make(map[netip.Addr]*peer),
		idle:     idleList{which: allLinks},
	}
}

// Limits returns the caps the listener enforces.
func (l *Listener) Limits() Limits { return l.lim }

// Accept waits for the next connection within the caps. Connections past a cap are closed and
// counted here and never returned (or, with EvictIdle, admitted in place of an idle one that is
// closed); an error of the wrapped listener is returned as it is.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, keyed := addrKey(c.RemoteAddr())
		conn := newConn(c, l, key, keyed)
		victim, cause, ok := l.admit(conn)
		if victim != nil {
			_ = victim.Conn.Close()
			l.evicted(cause, victim.RemoteAddr(), c.RemoteAddr())
		}
		if ok {
			return conn, nil
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
	s.Idle = l.nIdle
	s.Addrs = len(l.perAddr)
	return s
}

// admit takes a slot for c, closing an idle connection's slot for it when a cap is reached and
// EvictIdle allows (victim, whose socket the caller closes), or says which cap refuses it.
func (l *Listener) admit(c *Conn) (victim *Conn, cause Cause, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var p *peer
	if c.keyed {
		p = l.perAddr[c.key]
	}
	totalFull := l.lim.MaxConns > 0 && l.open >= l.lim.MaxConns
	addrFull := p != nil && l.lim.MaxPerAddr > 0 && p.open >= l.lim.MaxPerAddr
	if totalFull || addrFull {
		// The cause reported is the total cap's when both are reached, as without eviction.
		cause = CauseMaxPerAddr
		if totalFull {
			cause = CauseMaxConns
		}
		if l.lim.EvictIdle {
			// The address's own idle connection frees a slot of both caps; another's frees
			// only the total.
			if addrFull {
				victim = p.idle.head
			} else {
				victim = l.idle.head
			}
		}
		if victim == nil {
			if cause == CauseMaxConns {
				l.stats.RefusedMaxConns++
			} else {
				l.stats.RefusedMaxPerAddr++
			}
			return nil, cause, false
		}
		if cause == CauseMaxConns {
			l.stats.EvictedMaxConns++
		} else {
			l.stats.EvictedMaxPerAddr++
		}
		l.releaseLocked(victim)
		if c.keyed {
			p = l.perAddr[c.key] // the victim may have been the address's last
		}
	}
	l.open++
	if c.keyed {
		if p == nil {
			p = newPeer()
			l.perAddr[c.key] = p
		}
		p.open++
	}
	l.stats.Accepted++
	return victim, cause, true
}

// setIdle marks c idle, the most recent of the idle ones.
func (l *Listener) setIdle(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch c.state {
	case stateGone:
		return
	case stateIdle:
		l.unlinkIdle(c)
	}
	c.state = stateIdle
	l.idle.push(c)
	l.nIdle++
	if c.keyed {
		l.perAddr[c.key].idle.push(c)
	}
}

// setBusy marks c busy; false when c is gone.
func (l *Listener) setBusy(c *Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch c.state {
	case stateGone:
		return false
	case stateIdle:
		l.unlinkIdle(c)
		c.state = stateBusy
	}
	return true
}

// unlinkIdle takes an idle c out of the idle lists.
func (l *Listener) unlinkIdle(c *Conn) {
	l.idle.remove(c)
	l.nIdle--
	if c.keyed {
		l.perAddr[c.key].idle.remove(c)
	}
}

// release frees the slot admit took; only the first call for a connection frees it.
func (l *Listener) release(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(c)
}

func (l *Listener) releaseLocked(c *Conn) {
	if c.state == stateGone {
		return
	}
	if c.state == stateIdle {
		l.unlinkIdle(c)
	}
	c.state = stateGone
	l.open--
	if !c.keyed {
		return
	}
	p := l.perAddr[c.key]
	if p.open--; p.open == 0 {
		delete(l.perAddr, c.key)
	}
}

// refused logs a refusal, at most one line per logEvery; the line carries the refusals it
// stands for.
func (l *Listener) refused(cause Cause, remote net.Addr) {
	l.mu.Lock()
	log, byConns, byAddr := l.refusal.note(cause, time.Now())
	open := l.open
	l.mu.Unlock()
	if !log {
		return
	}
	l.log.Warn("connection refused: cap reached",
		"cause", cause.String(), "remote", remote.String(), "open", open,
		"max_conns", l.lim.MaxConns, "max_per_addr", l.lim.MaxPerAddr,
		"refused_max_conns", byConns, "refused_max_per_addr", byAddr)
}

// evicted logs the closing of an idle connection to admit another, at most one line per
// logEvery.
func (l *Listener) evicted(cause Cause, victim, admitted net.Addr) {
	l.mu.Lock()
	log, byConns, byAddr := l.evict.note(cause, time.Now())
	open, idle := l.open, l.nIdle
	l.mu.Unlock()
	if !log {
		return
	}
	l.log.Info("idle connection closed to admit another: cap reached",
		"cause", cause.String(), "closed", victim.String(), "admitted", admitted.String(),
		"open", open, "idle", idle, "max_conns", l.lim.MaxConns, "max_per_addr", l.lim.MaxPerAddr,
		"evicted_max_conns", byConns, "evicted_max_per_addr", byAddr)
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
