package link

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"net"
	"net/netip"
	"sync"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// acceptBacklog is how many accepted connections may wait for Accept (srt_listen's backlog).
const acceptBacklog = 64

// cookieBucket is the time a SYN cookie stays valid for, µs; a cookie of the previous bucket
// is accepted too, as libsrt's one-minute cookies.
const cookieBucket = 60_000_000

// Request describes a caller whose conclusion handshake passed the cookie and encryption
// checks.
type Request struct {
	streamID  string
	remote    netip.AddrPort
	encrypted bool
	version   uint32
}

// StreamID returns the stream id the caller sent ("" for none).
func (r *Request) StreamID() string { return r.streamID }

// RemoteAddr returns the caller's address.
func (r *Request) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(r.remote) }

// Encrypted reports whether the connection is encrypted.
func (r *Request) Encrypted() bool { return r.encrypted }

// PeerVersion returns the caller's SRT version (0x00XXYYZZ for XX.YY.ZZ).
func (r *Request) PeerVersion() uint32 { return r.version }

// Listener accepts SRT callers on one UDP socket.
type Listener struct {
	m       *mux
	cfg     resolved
	decide  func(*Request) Reject
	id      uint32
	seed    maphash.Seed
	accepts chan *Conn
	done    chan struct{}
	once    sync.Once

	// Under m.mu.
	byPeer  map[peerKey]*Conn
	closing bool
}

// peerKey identifies a caller: its address and its socket id.
type peerKey struct {
	addr netip.AddrPort
	id   uint32
}

// Listen opens a UDP socket on addr and accepts SRT callers on it. decide runs for each
// conclusion handshake that passed the cookie and encryption checks, on the socket's read
// loop (it must not block): it returns RejectNone to accept, or the reason to refuse with,
// which the caller sees. A nil decide accepts every caller.
func Listen(addr string, cfg Config, decide func(*Request) Reject) (*Listener, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	tr, err := newUDPTransport(pc)
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	l := newListener(tr, rc, decide)
	l.m.start()
	return l, nil
}

func newListener(tr transport, rc resolved, decide func(*Request) Reject) *Listener {
	if decide == nil {
		decide = func(*Request) Reject { return RejectNone }
	}
	l := &Listener{
		cfg:     rc,
		decide:  decide,
		seed:    maphash.MakeSeed(),
		accepts: make(chan *Conn, acceptBacklog),
		done:    make(chan struct{}),
		byPeer:  make(map[peerKey]*Conn),
	}
	l.m = newMux(tr, rc.Log.With("srt_listen", tr.localAddr().String()), false)
	l.m.ln = l
	var b [4]byte
	_, _ = rand.Read(b[:])
	l.id = binary.BigEndian.Uint32(b[:])&0x3FFFFFFF | 1
	return l
}

// Addr returns the listening address.
func (l *Listener) Addr() net.Addr { return l.m.tr.localAddr() }

// Accept waits for the next accepted connection; it returns ErrClosed once the listener is
// closed.
func (l *Listener) Accept(ctx context.Context) (*Conn, *Request, error) {
	select {
	case c := <-l.accepts:
		return c, c.req, nil
	case <-l.done:
		return nil, nil, ErrClosed
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// Close stops listening and closes every connection it accepted (their peers get a
// shutdown); every goroutine has ended when it returns. It may be called more than once.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.m.mu.Lock()
		l.closing = true
		conns := make([]*Conn, 0, len(l.m.conns))
		for _, c := range l.m.conns {
			conns = append(conns, c)
		}
		l.m.mu.Unlock()
		for _, c := range conns {
			c.mu.Lock()
			live := c.state == stateConnected
			c.mu.Unlock()
			if live {
				c.sendShutdown()
			}
			c.breakConn(ErrClosed)
		}
		close(l.done)
		l.m.close()
	})
	return nil
}

// forget drops c from the retransmitted-conclusion table.
func (l *Listener) forget(c *Conn) {
	if c.req == nil {
		return
	}
	l.m.mu.Lock()
	k := peerKey{c.peer, c.peerID}
	if l.byPeer[k] == c {
		delete(l.byPeer, k)
	}
	l.m.mu.Unlock()
}

// cookie is the SYN cookie for a caller at from in a time bucket: a keyed hash, so inductions
// leave no state behind.
func (l *Listener) cookie(from netip.AddrPort, bucket int64) uint32 {
	type input struct {
		addr   [16]byte
		port   uint16
		bucket int64
	}
	return uint32(maphash.Comparable(l.seed, input{from.Addr().As16(), from.Port(), bucket}))
}

func (l *Listener) cookieOK(c uint32, from netip.AddrPort, now int64) bool {
	b := now / cookieBucket
	return c == l.cookie(from, b) || c == l.cookie(from, b-1)
}

// handshake answers a handshake datagram addressed to the listener.
func (l *Listener) handshake(p *packet, now int64, out *outbox) {
	var ctl wire.Control
	if wire.ParseControl(p.buf[:p.n], &ctl) != nil {
		return
	}
	var hs wire.Handshake
	perr := wire.ParseHandshake(ctl.CIF, &hs)
	if perr != nil && len(ctl.CIF) < wire.HandshakeCIFLen {
		l.m.dropped.Add(1)
		return
	}
	switch hs.Type {
	case wire.HSInduction:
		l.induction(&hs, p.from, now, out)
	case wire.HSConclusion:
		if !l.cookieOK(hs.Cookie, p.from, now) {
			l.m.dropped.Add(1) // forged or stale: no answer, as libsrt
			return
		}
		l.conclusion(&ctl, &hs, perr, p.from, now, out)
	default:
		l.m.dropped.Add(1) // a listener takes no rendezvous (wave-a-hand, agreement)
	}
}

// induction answers statelessly with a cookie: version 5, the SRT magic, and the key length
// we advertise.
func (l *Listener) induction(hs *wire.Handshake, from netip.AddrPort, now int64, out *outbox) {
	if out.room() == 0 {
		return
	}
	rsp := wire.Handshake{
		Version:    wire.HSVersion5,
		Extension:  wire.SRTMagic,
		InitialSeq: hs.InitialSeq,
		MTU:        hs.MTU,
		FlowWindow: hs.FlowWindow,
		Type:       wire.HSInduction,
		SocketID:   hs.SocketID,
		Cookie:     l.cookie(from, now/cookieBucket),
		PeerIP:     hs.PeerIP,
	}
	if l.cfg.Passphrase != "" {
		rsp.Encryption = uint16(l.cfg.PBKeyLen / 8)
	}
	out.commit(appendHandshakePacket(out.buf(), hs.SocketID, uint32(now), &rsp), net.UDPAddrFromAddrPort(from), from)
}

// reject answers a conclusion with reason in the handshake type, as libsrt does; an HSv4
// caller, which does not read it, gets a shutdown too.
func (l *Listener) reject(hs *wire.Handshake, reason Reject, from netip.AddrPort, now int64, out *outbox) {
	if out.room() < 2 {
		return
	}
	rsp := wire.Handshake{
		Version:    hs.Version,
		Encryption: hs.Encryption,
		Extension:  hs.Extension,
		InitialSeq: hs.InitialSeq,
		MTU:        hs.MTU,
		FlowWindow: hs.FlowWindow,
		Type:       wire.Rejection(uint32(reason)),
		SocketID:   l.id,
		Cookie:     hs.Cookie,
		PeerIP:     hs.PeerIP,
	}
	to := net.UDPAddrFromAddrPort(from)
	out.commit(appendHandshakePacket(out.buf(), hs.SocketID, uint32(now), &rsp), to, from)
	if hs.Version < wire.HSVersion5 {
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlShutdown, Timestamp: uint32(now), DestSocket: hs.SocketID})
		out.commit(wire.AppendEmptyCIF(b), to, from)
	}
	l.m.log.Debug("srt caller rejected", "peer", from.String(), "reason", reason.String())
}

// checkHSReq decides whether an initiator's conclusion (a caller's, or a rendezvous peer's) can
// be accepted by a side configured with cfg, before its key material is opened.
func checkHSReq(cfg *resolved, hs *wire.Handshake, perr error) Reject {
	switch {
	case hs.Version != wire.HSVersion5:
		return RejectVersion
	case perr != nil, hs.HSCmd != wire.ExtHSReq, hs.InitialSeq > wire.SeqMask:
		return RejectRogue
	case hs.HS.Flags&wire.FlagStream != 0:
		return RejectMessageAPI
	case hs.HasCongestion && hs.Congestion() != "live":
		return RejectCongestion
	case hs.HasFilter:
		return RejectFilter
	case hs.HasGroup:
		return RejectGroup
	case cfg.Passphrase == "" && hs.KMCmd != 0:
		return RejectUnsecure
	case cfg.Passphrase != "" && hs.KMCmd != wire.ExtKMReq:
		return RejectUnsecure
	}
	return RejectNone
}

// putHSRsp adds to rsp the responder's HSRSP with each direction's latency, µs, and a KMRSP
// confirming km, the initiator's key material, when it is not nil.
func putHSRsp(rsp *wire.Handshake, rcvLat, sndLat int64, km []byte) {
	rsp.Extension = wire.HSExtHSReq
	rsp.HSCmd = wire.ExtHSRsp
	rsp.HS = wire.HSExt{Version: srtVersion, Flags: srtFlags, RecvDelay: latencyMS(rcvLat), SendDelay: latencyMS(sndLat)}
	if km != nil {
		rsp.Extension |= wire.HSExtKMReq
		rsp.KMCmd, rsp.KM = wire.ExtKMRsp, km // the same KM confirms it opened
	}
}

// conclusion accepts or refuses a caller whose cookie checked out.
func (l *Listener) conclusion(ctl *wire.Control, hs *wire.Handshake, perr error, from netip.AddrPort, now int64, out *outbox) {
	m := l.m
	key := peerKey{from, hs.SocketID}
	m.mu.Lock()
	existing := l.byPeer[key]
	closing := l.closing
	full := len(m.conns) >= l.cfg.MaxConns
	m.mu.Unlock()
	if existing != nil {
		// The caller lost our answer and asks again.
		existing.mu.Lock()
		resp := existing.hsResp
		existing.mu.Unlock()
		if resp != nil && out.room() > 0 {
			b := append(out.buf(), resp...)
			// The caller sets its time base from this timestamp: now, not when first sent.
			binary.BigEndian.PutUint32(b[8:12], existing.ts(now))
			out.commit(b, existing.peerUDP, from)
		}
		return
	}
	reason := checkHSReq(&l.cfg, hs, perr)
	if closing {
		reason = RejectClose
	}
	var rcrypt *crypt.Receiver
	var scrypt *crypt.Sender
	if reason == RejectNone && l.cfg.Passphrase != "" {
		rcrypt, scrypt, reason = openCallerKM(&l.cfg, hs.KM)
	}
	if reason == RejectNone && full {
		reason = RejectResource
	}
	if reason == RejectNone && len(l.accepts) == cap(l.accepts) {
		reason = RejectBacklog
	}
	req := &Request{streamID: hs.StreamID(), remote: from, encrypted: rcrypt != nil, version: hs.HS.Version}
	if reason == RejectNone {
		reason = l.decide(req)
	}
	if reason != RejectNone {
		l.reject(hs, reason, from, now, out)
		return
	}

	m.mu.Lock()
	id := m.newSocketIDLocked()
	c := newConn(m, &l.cfg, id, hs.SocketID, from, now)
	c.req, c.rcrypt, c.scrypt = req, rcrypt, scrypt
	c.handshaken(ctl.Timestamp, hs, hs.InitialSeq, now)
	rsp := wire.Handshake{
		Version:    wire.HSVersion5,
		Encryption: hs.Encryption,
		InitialSeq: hs.InitialSeq,
		MTU:        min(hs.MTU, mss),
		FlowWindow: uint32(l.cfg.rcvPkts),
		Type:       wire.HSConclusion,
		SocketID:   id,
		Cookie:     hs.Cookie,
	}
	rsp.PutPeerAddr(peerAddr(from))
	var km []byte
	if rcrypt != nil {
		km = hs.KM
	}
	putHSRsp(&rsp, c.rcvLatency, c.sndLatency, km)
	c.hsResp = appendHandshakePacket(nil, hs.SocketID, 0, &rsp)
	m.conns[id] = c
	l.byPeer[key] = c
	m.mu.Unlock()

	if out.room() > 0 {
		out.commit(append(out.buf(), c.hsResp...), c.peerUDP, from)
	}
	select {
	case l.accepts <- c:
	default:
		c.breakConn(ErrClosed) // cannot happen: the backlog was checked on this goroutine
		return
	}
	c.mu.Lock()
	m.clk.schedule(c, c.nextDeadlineLocked(now))
	c.mu.Unlock()
}
