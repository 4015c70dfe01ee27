package link

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// dialer is a caller's or a rendezvous handshake in progress: the read loop hands it the
// datagrams of its peer that are its to handle (see wants).
type dialer struct {
	id   uint32
	peer netip.AddrPort
	rdv  bool
	ch   chan hsDatagram
}

// hsDatagram is a handshake datagram (a copy) and when it arrived; a nil b stands for another
// packet of the peer's to our socket id, which a rendezvous responder takes as the sign that
// the initiator is connected, unless it is a shutdown.
type hsDatagram struct {
	b        []byte
	at       int64
	shutdown bool
}

// handshakeQueue bounds the datagrams waiting for a handshake goroutine; more are dropped, and
// the peer repeats them.
const handshakeQueue = 8

// wants reports whether a datagram for socket dest (a handshake or another packet) that no
// connection took is the handshake's: a caller's handshakes to its socket id; in a rendezvous
// also the peer's wave-a-hands, sent before it knows our socket id (0), and any other packet to
// our socket id.
func (d *dialer) wants(dest uint32, hs bool) bool {
	if d.rdv {
		return dest == d.id || (hs && dest == 0)
	}
	return hs && dest == d.id
}

// deliver queues a datagram the handshake wants (b holds at least a packet header); it reports
// false, for the caller to count it dropped, when it comes from another address than the
// peer's. A handshake is copied, only when there is room for it; another packet is queued as
// an empty datagram.
func (d *dialer) deliver(b []byte, hs bool, from netip.AddrPort, now int64) bool {
	if from != d.peer {
		return false
	}
	if len(d.ch) == cap(d.ch) {
		return true
	}
	dg := hsDatagram{at: now}
	if hs {
		dg.b = append([]byte(nil), b...)
	} else {
		dg.shutdown = b[0]&0x80 != 0 && binary.BigEndian.Uint16(b[0:2])&0x7FFF == uint16(wire.CtrlShutdown)
	}
	select {
	case d.ch <- dg:
	default:
	}
	return true
}

// Dial connects to the SRT listener at addr (host:port) as a caller. It repeats its handshake
// every 250 ms until the listener answers or cfg.ConnectTimeout (or ctx) ends. A refusal is a
// *RejectError; errors.Is tells ErrBadPassphrase (the passphrases differ) from ErrNoPassphrase
// (only one side has one).
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	m, d, err := ownSocket("", addr, false, rc.Log.With("srt_dial", addr))
	if err != nil {
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	c, err := m.handshake(ctx, d, &rc, addr)
	if err != nil {
		m.close()
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	return c, nil
}

// ownSocket opens the UDP socket of a caller or rendezvous connection to remote (host:port),
// bound to local ("" for any address and port of remote's family), and starts its mux with
// the handshake registered.
func ownSocket(local, remote string, rdv bool, log *slog.Logger) (*mux, *dialer, error) {
	ra, err := net.ResolveUDPAddr("udp", remote)
	if err != nil {
		return nil, nil, err
	}
	network := "udp4"
	if ra.IP.To4() == nil {
		network = "udp6"
	}
	var la *net.UDPAddr
	if local != "" {
		if la, err = net.ResolveUDPAddr(network, local); err != nil {
			return nil, nil, err
		}
	}
	pc, err := net.ListenUDP(network, la)
	if err != nil {
		return nil, nil, err
	}
	tr, err := newUDPTransport(pc)
	if err != nil {
		_ = pc.Close()
		return nil, nil, err
	}
	peer := ra.AddrPort()
	m, d := startOwnMux(tr, netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port()), rdv, log)
	return m, d, nil
}

// startOwnMux starts the mux of one caller or rendezvous connection on tr, with its handshake
// with peer registered.
func startOwnMux(tr transport, peer netip.AddrPort, rdv bool, log *slog.Logger) (*mux, *dialer) {
	m := newMux(tr, log, true)
	d := &dialer{peer: peer, rdv: rdv, ch: make(chan hsDatagram, handshakeQueue)}
	m.mu.Lock()
	d.id = m.newSocketIDLocked()
	m.mu.Unlock()
	m.dl.Store(d)
	m.start()
	return m, d
}

// hsSender sends a handshake goroutine's datagrams to the peer, one at a time.
type hsSender struct {
	m    *mux
	o    *outbox
	to   *net.UDPAddr
	peer netip.AddrPort
}

func newHSSender(m *mux, peer netip.AddrPort) *hsSender {
	return &hsSender{m: m, o: newOutbox(1), to: net.UDPAddrFromAddrPort(peer), peer: peer}
}

// send sends hs to socket dest, stamped with the mux clock.
func (s *hsSender) send(dest uint32, hs *wire.Handshake) {
	s.o.commit(appendHandshakePacket(s.o.buf(), dest, uint32(s.m.now()), hs), s.to, s.peer)
	_ = s.o.flush(s.m.tr)
}

// randomISN returns a random initial sequence number.
func randomISN() uint32 {
	var b [4]byte
	randRead(b[:])
	return binary.BigEndian.Uint32(b[:]) & wire.SeqMask
}

// keyLength is the AES key length, bytes, of the key material an initiator makes: its own
// PBKeyLen or the length the peer advertised (the peer's first when theirsWins, as a libsrt
// rendezvous initiator does; ours first otherwise), else 16.
func keyLength(own int, advertised uint16, theirsWins bool) int {
	theirs := 0
	if advertised >= 2 && advertised <= 4 {
		theirs = int(advertised) * 8
	}
	if theirsWins || own == 0 {
		own = cmp.Or(theirs, own)
	}
	return cmp.Or(own, 16)
}

// putHSReq makes req the initiator's conclusion: HSREQ with our latency, KMREQ with new keys of
// keyLen bytes when we have a passphrase, and the stream id. It returns the keys' sender and
// the key material sent.
func putHSReq(req *wire.Handshake, rc *resolved, keyLen int) (*crypt.Sender, []byte, error) {
	req.Version, req.Type = wire.HSVersion5, wire.HSConclusion
	req.Extension = wire.HSExtHSReq
	lat := latencyMS(int64(rc.Latency / 1000))
	req.HSCmd = wire.ExtHSReq
	req.HS = wire.HSExt{Version: srtVersion, Flags: srtFlags, RecvDelay: lat, SendDelay: lat}
	var seal *crypt.Sender
	var km []byte
	if rc.Passphrase != "" {
		var err error
		if seal, err = crypt.NewSender(rc.Passphrase, keyLen, rc.refresh()); err != nil {
			return nil, nil, err
		}
		km = seal.KM(nil)
		req.Encryption = uint16(keyLen / 8)
		req.Extension |= wire.HSExtKMReq
		req.KMCmd, req.KM = wire.ExtKMReq, km
	}
	if rc.StreamID != "" {
		if err := req.SetStreamID(rc.StreamID); err != nil {
			return nil, nil, err
		}
		req.Extension |= wire.HSExtConfig
	}
	return seal, km, nil
}

// handshake runs the caller's side: induction, then conclusion, each repeated until answered.
func (m *mux) handshake(ctx context.Context, d *dialer, rc *resolved, addr string) (*Conn, error) {
	req := wire.Handshake{
		Version:    wire.HSVersion4,
		Extension:  wire.UDTDgram,
		InitialSeq: randomISN(),
		MTU:        mss,
		FlowWindow: uint32(rc.rcvPkts),
		Type:       wire.HSInduction,
		SocketID:   d.id,
	}
	req.PutPeerAddr(d.peer.Addr())
	s := newHSSender(m, d.peer)
	send := func() { s.send(0, &req) }
	var seal *crypt.Sender
	var km []byte
	return m.handshakeLoop(ctx, d, rc.ConnectTimeout, send, func(dg hsDatagram) (*Conn, bool, error) {
		var ctl wire.Control
		var hs wire.Handshake
		if wire.ParseControl(dg.b, &ctl) != nil || wire.ParseHandshake(ctl.CIF, &hs) != nil {
			return nil, false, nil
		}
		if hs.Type.IsRejection() {
			return nil, false, &RejectError{Reason: Reject(hs.Type.RejectReason()), Addr: addr}
		}
		switch {
		case req.Type == wire.HSInduction && hs.Type == wire.HSInduction:
			if hs.Version < wire.HSVersion5 || hs.Extension != wire.SRTMagic {
				return nil, false, ErrVersion
			}
			req.Cookie = hs.Cookie
			var err error
			if seal, km, err = putHSReq(&req, rc, keyLength(rc.PBKeyLen, hs.Encryption, false)); err != nil {
				return nil, false, err
			}
			send()
			return nil, true, nil
		case req.Type == wire.HSConclusion && hs.Type == wire.HSConclusion:
			open, err := checkHSRsp(rc, &hs, seal, km, addr)
			if err != nil {
				return nil, false, err
			}
			return m.ownConn(d, rc, req.InitialSeq, ctl.Timestamp, &hs, open, seal, dg.at, nil), false, nil
		}
		return nil, false, nil
	})
}

// handshakeLoop runs a caller's or rendezvous handshake: it calls send at once and every
// handshakeResend, and handle for each datagram of the handshake's, until handle makes the
// connection or fails, or the timeout or ctx ends. handle reports whether it sent something
// new, which restarts the repeat period.
func (m *mux) handshakeLoop(ctx context.Context, d *dialer, timeout time.Duration, send func(),
	handle func(hsDatagram) (c *Conn, sent bool, err error)) (*Conn, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	resend := time.NewTicker(handshakeResend * time.Microsecond)
	defer resend.Stop()
	send()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, ErrConnectTimeout
		case <-resend.C:
			send()
		case dg := <-d.ch:
			c, sent, err := handle(dg)
			if c != nil || err != nil {
				return c, err
			}
			if sent {
				resend.Reset(handshakeResend * time.Microsecond)
			}
		}
	}
}

// checkHSRsp checks the responder's conclusion answer to our HSREQ (and KMREQ when seal is
// set): it returns the receiver of what the responder sends, encrypted with our keys.
func checkHSRsp(rc *resolved, hs *wire.Handshake, seal *crypt.Sender, km []byte, addr string) (*crypt.Receiver, error) {
	if hs.Version < wire.HSVersion5 || hs.HSCmd != wire.ExtHSRsp || hs.SocketID == 0 || hs.InitialSeq > wire.SeqMask {
		return nil, fmt.Errorf("conclusion answer without HSRSP, socket id or sequence number: %w", ErrProtocol)
	}
	switch {
	case seal != nil && hs.KMCmd != wire.ExtKMRsp:
		return nil, &RejectError{Reason: RejectUnsecure, Addr: addr}
	case seal != nil:
		if st, ok := crypt.ParseKMState(hs.KM); ok {
			if r := kmStateReject(st); r != RejectNone {
				return nil, &RejectError{Reason: r, Addr: addr}
			}
		}
		// The responder encrypts what it sends with our keys.
		return crypt.NewReceiver(rc.Passphrase, km)
	case hs.KMCmd == wire.ExtKMRsp:
		// The responder encrypts and we do not.
		return nil, &RejectError{Reason: RejectUnsecure, Addr: addr}
	}
	return nil, nil
}

// ownConn makes the connection of a caller or rendezvous handshake that concluded, on its own
// mux, and ends the handshake: hs is the peer's handshake that carried its HSREQ or HSRSP, ts
// and at its timestamp and arrival, isn our initial sequence number. agree, for a rendezvous,
// is the agreement the connection answers the peer's repeated handshakes with.
func (m *mux) ownConn(d *dialer, rc *resolved, isn, ts uint32, hs *wire.Handshake,
	open *crypt.Receiver, seal *crypt.Sender, at int64, agree []byte) *Conn {
	c := newConn(m, rc, d.id, hs.SocketID, d.peer, at)
	c.ownMux = true
	c.t0 = 0 // our timestamps count from the socket's start, as the handshake's did
	c.rcrypt, c.scrypt = open, seal
	c.rdv, c.hsResp = agree != nil, agree
	c.handshaken(ts, hs, isn, at)
	m.mu.Lock()
	m.conns[c.id] = c
	m.dl.Store(nil)
	m.mu.Unlock()
	c.mu.Lock()
	m.clk.schedule(c, c.nextDeadlineLocked(m.now()))
	c.mu.Unlock()
	c.log.Debug("srt connected", "latency", c.Latency(), "peer_latency", c.PeerLatency())
	return c
}

// errReject is the rejection reason a handshake error of ours is sent to the peer with.
func errReject(err error) Reject {
	var re *RejectError
	switch {
	case errors.As(err, &re):
		return re.Reason
	case errors.Is(err, ErrProtocol):
		return RejectRogue
	}
	return RejectIPE
}
