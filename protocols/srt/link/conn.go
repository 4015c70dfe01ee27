package link

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Connection states.
const (
	stateConnected = iota
	stateBroken    // the peer shut down, went idle, or the listener closed: Read drains, Write fails
	stateClosed    // Close was called
)

// closeLinger bounds how long Close waits for what was written to be acknowledged before it
// shuts the connection down.
const closeLinger = time.Second

// Conn is an SRT live-mode connection: one message (a payload of up to PayloadSize bytes) per
// Read and per Write. Read, Write, Stats and Close may be called from different goroutines.
type Conn struct {
	m       *mux
	ownMux  bool // a caller's or rendezvous connection: closing it closes the socket
	rdv     bool // a rendezvous connection: hsResp is the agreement a repeated handshake gets
	id      uint32
	peerID  uint32
	peer    netip.AddrPort
	peerUDP *net.UDPAddr
	cfg     *resolved
	log     *slog.Logger
	req     *Request // listener side

	t0         int64 // mux clock at the connection's start: our timestamps count from it
	rcvLatency int64 // negotiated, µs
	sndLatency int64 // negotiated, µs
	peerNAK    bool  // the peer sends periodic NAK reports
	peerVer    uint32

	readMu    sync.Mutex  // one Read at a time
	readTimer *time.Timer // Read's wait for the head packet's delivery time
	readWake  chan struct{}
	done      chan struct{} // closed when broken or closed
	doneOnce  sync.Once
	closeOnce sync.Once
	lingered  chan struct{} // closed when Close may stop lingering
	deadline  atomic.Int64  // read deadline, Unix nanoseconds; 0 for none

	mu        sync.Mutex
	state     int
	err       error  // why the connection broke
	hsResp    []byte // the answer to a repeated handshake: conclusion (listener side) or agreement
	rcv       recvState
	snd       sendState
	rtt       int64 // µs, smoothed
	rttVar    int64
	rttSeen   bool
	lastRecv  int64        // any packet from the peer, mux clock
	heard     atomic.Int64 // lastRecv, readable without mu (Silence)
	lastSend  int64        // any packet to the peer
	lingering bool
	rdWaiting bool
	st        counters
	rcrypt    *crypt.Receiver
	scrypt    *crypt.Sender
	kmSent    int // key refreshes announced (KMREQ sent, retries included)
	kmApplied int // key refreshes from the peer applied

	// Clock scheduling, under m.clk.mu.
	hidx    int
	clkDue  int64
	inReady bool
}

// initial RTT before the first sample, as libsrt.
const (
	initRTT    = 100_000 // µs
	initRTTVar = 50_000
)

func newConn(m *mux, cfg *resolved, id, peerID uint32, peer netip.AddrPort, now int64) *Conn {
	c := &Conn{
		m:        m,
		id:       id,
		peerID:   peerID,
		peer:     peer,
		peerUDP:  net.UDPAddrFromAddrPort(peer),
		cfg:      cfg,
		t0:       now,
		readWake: make(chan struct{}, 1),
		done:     make(chan struct{}),
		lingered: make(chan struct{}),
		rtt:      initRTT,
		rttVar:   initRTTVar,
		lastRecv: now,
		lastSend: now,
		hidx:     -1,
	}
	c.heard.Store(now)
	c.log = cfg.Log.With("srt_socket", id, "peer", peer.String())
	return c
}

// handshaken applies the peer's handshake hs that carried its HSREQ or HSRSP, stamped ts and
// arrived at: its SRT version and flags, each direction's latency, the sequence numbers (the
// peer's initial one for what we receive, isn for what we send), the peer's time base and its
// flow window.
func (c *Conn) handshaken(ts uint32, hs *wire.Handshake, isn uint32, at int64) {
	c.peerVer = hs.HS.Version
	c.peerNAK = hs.HS.Flags&wire.FlagNAKReport != 0
	c.rcvLatency, c.sndLatency = latencies(c.cfg, &hs.HS)
	c.rcv.init(hs.InitialSeq, c.cfg.rcvPkts, at-int64(ts), ts, at)
	c.snd.init(isn, c.cfg.sndPkts, int(min(hs.FlowWindow, 1<<20)), at)
}

// latencies returns each direction's latency, µs, from our wish and the peer's in its HSREQ or
// HSRSP: the larger of both.
func latencies(rc *resolved, peer *wire.HSExt) (rcv, snd int64) {
	lat := int64(rc.Latency / 1000)
	return max(lat, int64(peer.SendDelay)*1000), max(lat, int64(peer.RecvDelay)*1000)
}

// ts returns the timestamp of a packet we send at now.
func (c *Conn) ts(now int64) uint32 { return uint32(now - c.t0) }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.peerUDP }

// LocalAddr returns the local socket's address.
func (c *Conn) LocalAddr() net.Addr { return c.m.tr.localAddr() }

// StreamID returns the stream id: what the caller sent (listener side), what we sent (caller
// side), or in a rendezvous what the initiator sent (ours when it sent none).
func (c *Conn) StreamID() string {
	if c.req != nil {
		return c.req.streamID
	}
	return c.cfg.StreamID
}

// Latency returns the negotiated receive latency.
func (c *Conn) Latency() time.Duration { return time.Duration(c.rcvLatency) * time.Microsecond }

// PeerLatency returns the negotiated latency of what we send (the peer's receive latency).
func (c *Conn) PeerLatency() time.Duration { return time.Duration(c.sndLatency) * time.Microsecond }

// Encrypted reports whether the connection encrypts its payloads.
func (c *Conn) Encrypted() bool { return c.rcrypt != nil || c.scrypt != nil }

// SetReadDeadline makes Read return os.ErrDeadlineExceeded after t; the zero time clears it.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		c.deadline.Store(0)
	} else {
		c.deadline.Store(t.UnixNano())
	}
	c.signalReader()
	return nil
}

// signalReader wakes a Read that waits.
func (c *Conn) signalReader() {
	select {
	case c.readWake <- struct{}{}:
	default:
	}
}

// Silence returns how long the peer has sent nothing (no data, no control packet). It takes
// no lock: a caller on the socket's read loop may ask it.
func (c *Conn) Silence() time.Duration {
	return time.Duration(c.m.now()-c.heard.Load()) * time.Microsecond
}

// Done is closed once the connection is broken (the peer shut down or went idle, the
// listener closed) or closed; Read may still return what arrived before.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) markDone() { c.doneOnce.Do(func() { close(c.done) }) }

// breakLocked ends the connection for err (io.EOF after the peer's shutdown); what was
// received stays readable. The caller holds c.mu and removes c from its mux afterwards.
func (c *Conn) breakLocked(err error) bool {
	if c.state != stateConnected {
		return false
	}
	c.state, c.err = stateBroken, err
	c.rcv.flush = true
	c.snd.buf.release()
	c.snd.loss.clear()
	c.markDone()
	c.signalReader()
	c.lingerDoneLocked()
	switch {
	case errors.Is(err, ErrPeerIdle):
		c.log.Info("srt connection broken", "err", err)
	default:
		c.log.Debug("srt connection ended", "err", err)
	}
	return true
}

// breakConn breaks the connection and forgets it in its mux.
func (c *Conn) breakConn(err error) {
	c.mu.Lock()
	ok := c.breakLocked(err)
	c.mu.Unlock()
	if ok {
		c.m.remove(c)
	}
}

func (c *Conn) lingerDoneLocked() {
	if c.lingering {
		c.lingering = false
		close(c.lingered)
	}
}

// Close waits up to a second for what was written to be acknowledged, sends the peer a
// shutdown and frees the connection; a caller's connection closes its socket too, and every
// goroutine has ended when Close returns. It may be called more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(c.close)
	return nil
}

func (c *Conn) close() {
	c.mu.Lock()
	if c.state == stateConnected && c.snd.buf.n > 0 {
		c.lingering = true
		c.mu.Unlock()
		t := time.NewTimer(closeLinger)
		select {
		case <-c.lingered:
		case <-t.C:
		}
		t.Stop()
		c.mu.Lock()
	}
	sendShutdown := c.state == stateConnected
	c.state = stateClosed
	if c.err == nil {
		c.err = ErrClosed
	}
	c.snd.buf.release()
	c.snd.loss.clear()
	c.mu.Unlock()
	c.markDone()
	c.signalReader()
	if sendShutdown {
		c.sendShutdown()
	}
	c.m.remove(c)
	// Read may still hold packets; free them once no Read runs.
	c.readMu.Lock()
	c.mu.Lock()
	c.rcv.buf.release()
	c.mu.Unlock()
	c.readMu.Unlock()
	if c.ownMux {
		c.m.close()
	}
}

// sendShutdown tells the peer we close, with one datagram written directly.
func (c *Conn) sendShutdown() {
	o := newOutbox(1)
	b := wire.AppendControlHeader(o.buf(), &wire.Control{Type: wire.CtrlShutdown, Timestamp: c.ts(c.m.now()), DestSocket: c.peerID})
	b = wire.AppendEmptyCIF(b)
	o.commit(b, c.peerUDP, c.peer)
	_ = o.flush(c.m.tr)
}

// Stats returns a snapshot of the connection's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.m.now()
	st := c.st
	s := Stats{
		RTT:          time.Duration(c.rtt) * time.Microsecond,
		RTTVar:       time.Duration(c.rttVar) * time.Microsecond,
		LinkCapacity: c.rcv.probe.pktsPerSec() * int64(c.cfg.PayloadSize+headerOverhead) * 8,
		RecvRate:     c.rcv.rate.byteRate * 8,
		SendRate:     c.snd.rate.byteRate * 8,
		MaxBW:        c.snd.paceRate(c.cfg.MaxBW),
		Latency:      c.Latency(),
		PeerLatency:  c.PeerLatency(),

		PktSent: st.pktSent, ByteSent: st.byteSent, PktSentUniq: st.pktSentUniq, PktRetrans: st.pktRetrans,
		ByteRetrans: st.byteRetrans, PktSendLoss: st.pktSendLoss, PktSendDrop: st.pktSendDrop, ByteSendDrop: st.byteSendDrop,

		PktRecv: st.pktRecv, ByteRecv: st.byteRecv, PktRecvUniq: st.pktRecvUniq, PktRecvRetrans: st.pktRecvRetrans,
		PktRecvLoss: st.pktRecvLoss, PktRecvDrop: st.pktRecvDrop, PktRecvBelated: st.pktRecvBelated, PktRecvDup: st.pktRecvDup,
		PktRecvUndecrypt: st.pktRecvUndecrypt, PktRecvOverflow: st.pktRecvOverflow,

		RecvBufPkts:  c.rcv.buf.count,
		RecvBufBytes: c.rcv.bufBytes,
		SendBufPkts:  c.snd.buf.n,
		SendBufBytes: c.snd.buf.bytes,
		FlowWindow:   c.snd.flowWindow,
	}
	if c.rcv.buf.count > 0 {
		if first := c.rcv.buf.firstPresent(c.rcv.span()); first >= 0 {
			s.RecvBufSpan = time.Duration(c.rcv.tsHigh-c.rcv.buf.at(first).ts) * time.Microsecond
		}
	}
	if f := c.snd.buf.front(); f != nil {
		s.SendBufSpan = time.Duration(now-f.origin) * time.Microsecond
	}
	return s
}
