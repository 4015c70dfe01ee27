package link

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Rendezvous makes an SRT connection with the peer at remote (host:port) in rendezvous mode:
// both sides call each other, each from the local address the other expects, and neither
// listens. It binds its UDP socket to local ("host:port" or ":port"), and only datagrams from
// exactly remote take part. The handshake is HSv5's, as libsrt 1.5 makes it: both sides wave
// (repeated every 250 ms), the larger cookie makes its side the initiator, whose key material
// (with a passphrase) encrypts both ways and whose stream id, if it sends one, both sides
// report. It ends with ErrConnectTimeout after cfg.ConnectTimeout, with ctx's error, with a
// *RejectError when either side refuses (errors.Is tells ErrBadPassphrase and ErrNoPassphrase,
// as for Dial; equal cookies are RejectRdvCookie), or with ErrVersion for an HSv4 peer. The
// connection behaves as Dial's, and closing it closes the socket.
func Rendezvous(ctx context.Context, local, remote string, cfg Config) (*Conn, error) {
	return rendezvousCookie(ctx, local, remote, cfg, 0)
}

// rendezvousCookie is Rendezvous with our cookie chosen (0: a random one).
func rendezvousCookie(ctx context.Context, local, remote string, cfg Config, cookie uint32) (*Conn, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("srt rendezvous %s: %w", remote, err)
	}
	m, d, err := ownSocket(local, remote, true, rc.Log.With("srt_rendezvous", remote))
	if err != nil {
		return nil, fmt.Errorf("srt rendezvous %s: %w", remote, err)
	}
	return m.rendezvous(ctx, d, newRdv(&rc, d.id, cookie, d.peer, remote))
}

// rdvRole is a rendezvous side's role, decided by the cookie contest.
type rdvRole uint8

const (
	rdvDraw      rdvRole = iota // not decided yet, or the cookies are equal
	rdvInitiator                // sends HSREQ (and KMREQ), then the agreement
	rdvResponder                // answers the HSREQ with HSRSP (and KMRSP)
)

// cookieContest decides our role from both cookies as libsrt 1.5 does: the cookie greater in
// 32-bit serial order (the difference taken modulo 2^32 is below 2^31) makes the initiator;
// exactly 2^31 apart, the greater as a signed 32-bit number; equal cookies, or a peer's zero
// cookie, decide nothing.
func cookieContest(ours, theirs uint32) rdvRole {
	if ours == theirs || theirs == 0 {
		return rdvDraw
	}
	switch d := ours - theirs; {
	case d < 1<<31:
		return rdvInitiator
	case d > 1<<31:
		return rdvResponder
	case int32(ours) > int32(theirs):
		return rdvInitiator
	}
	return rdvResponder
}

// rdvState is where a rendezvous handshake stands.
type rdvState uint8

const (
	rdvWaving    rdvState = iota // sending wave-a-hands, nothing heard from the peer
	rdvAttention                 // roles known: sending our conclusion (the initiator's with HSREQ, the responder's empty)
	rdvInitiated                 // responder: answered the HSREQ with HSRSP, waits for the agreement
)

// rdvAction is what a rendezvous side does after a datagram from its peer.
type rdvAction uint8

const (
	rdvWait     rdvAction = iota // nothing now: keep repeating req
	rdvSend                      // send req now (with an error: once, a rejection), then keep repeating it
	rdvDone                      // connected (responder)
	rdvSendDone                  // connected: send req, the agreement, once (initiator)
)

// rdv is one side of an HSv5 rendezvous handshake, without I/O: receive takes the peer's
// datagrams and says what to send and when the connection is made. Its state is a few fixed
// fields whatever the peer sends: the first handshake of a socket id and a non-zero cookie pins
// the peer, and every later one must match it.
type rdv struct {
	rc    *resolved
	id    uint32 // our socket id
	addr  string // the peer's, for errors
	state rdvState
	role  rdvRole
	req   wire.Handshake // what we send, repeated every handshakeResend

	peerID     uint32 // from the peer's first handshake; 0 before
	peerCookie uint32

	seal *crypt.Sender   // initiator: our keys; responder: the initiator's, for what we send
	km   []byte          // initiator: the key material we sent
	open *crypt.Receiver // the keys of what we receive (the initiator's)

	// The peer's handshake that carried its HSREQ (we are the responder) or HSRSP (initiator),
	// its timestamp and arrival: what the connection is made from.
	peerHS wire.Handshake
	peerTS uint32
	peerAt int64
}

// newRdv starts a rendezvous of socket id with peer (named addr in errors); cookie 0 draws a
// random one.
func newRdv(rc *resolved, id, cookie uint32, peer netip.AddrPort, addr string) *rdv {
	for cookie == 0 {
		var b [4]byte
		randRead(b[:])
		cookie = binary.BigEndian.Uint32(b[:])
	}
	r := &rdv{rc: rc, id: id, addr: addr}
	r.req = wire.Handshake{
		Version:    wire.HSVersion5,
		Encryption: uint16(rc.PBKeyLen / 8), // advertised, for the initiator's key material
		InitialSeq: randomISN(),
		MTU:        mss,
		FlowWindow: uint32(rc.rcvPkts),
		Type:       wire.HSWaveAHand,
		SocketID:   id,
		Cookie:     cookie,
	}
	r.req.PutPeerAddr(peer.Addr())
	return r
}

// bare returns our handshake of type t without extensions: an agreement or a rejection.
func (r *rdv) bare(t wire.HandshakeType) wire.Handshake {
	h := wire.Handshake{Version: wire.HSVersion5, Encryption: r.req.Encryption, InitialSeq: r.req.InitialSeq,
		MTU: r.req.MTU, FlowWindow: r.req.FlowWindow, Type: t, SocketID: r.id, Cookie: r.req.Cookie}
	h.PeerIP = r.req.PeerIP
	return h
}

// reject makes req the rejection for reason, to be sent once.
func (r *rdv) reject(reason Reject) (rdvAction, error) {
	r.req = r.bare(wire.Rejection(uint32(reason)))
	return rdvSend, &RejectError{Reason: reason, Addr: r.addr}
}

// receive handles a datagram from the peer that the mux handed over (see dialer.wants): a
// handshake, or nil for another packet to our socket id.
func (r *rdv) receive(dg hsDatagram) (rdvAction, error) {
	switch {
	case dg.shutdown:
		// libsrt shuts down after it rejected: we may have missed the rejection.
		return rdvWait, &RejectError{Reason: RejectPeer, Addr: r.addr}
	case dg.b == nil:
		// The initiator sends data, keep-alives or ACKs once connected: a responder that missed
		// its agreement is connected too.
		if r.role == rdvResponder && r.state == rdvInitiated {
			return rdvDone, nil
		}
		return rdvWait, nil
	}
	var ctl wire.Control
	if wire.ParseControl(dg.b, &ctl) != nil || ctl.Type != wire.CtrlHandshake {
		return rdvWait, nil
	}
	var hs wire.Handshake
	perr := wire.ParseHandshake(ctl.CIF, &hs)
	if perr != nil && len(ctl.CIF) < wire.HandshakeCIFLen {
		return rdvWait, nil
	}
	return r.step(ctl.DestSocket, ctl.Timestamp, &hs, perr, dg.at)
}

// step handles the peer's handshake hs (perr: its extensions did not parse) to socket dest,
// stamped ts and arrived at.
func (r *rdv) step(dest, ts uint32, hs *wire.Handshake, perr error, at int64) (rdvAction, error) {
	// Every handshake carries the peer's socket id, pinned by the first. Only a wave-a-hand
	// and a rejection (libsrt may reject before it sent anything to our socket id) may come
	// before the peer knows ours; every other handshake answers ours.
	early := hs.Type == wire.HSWaveAHand || hs.Type.IsRejection()
	if hs.SocketID == 0 || (r.peerID != 0 && hs.SocketID != r.peerID) || (dest != r.id && !(early && dest == 0)) {
		return rdvWait, nil
	}
	switch {
	case hs.Type.IsRejection():
		return rdvWait, &RejectError{Reason: Reject(hs.Type.RejectReason()), Addr: r.addr}
	case hs.Type == wire.HSAgreement:
		// A connected libsrt answers a repeated handshake with an agreement without its cookie.
		if r.role == rdvResponder && r.state == rdvInitiated {
			return rdvDone, nil
		}
		return rdvWait, nil
	case hs.Type != wire.HSWaveAHand && hs.Type != wire.HSConclusion:
		return rdvWait, nil
	}
	if hs.Version < wire.HSVersion5 {
		return rdvWait, ErrVersion // an HSv4 peer waves with version 4
	}
	switch {
	case r.role == rdvDraw && hs.Cookie == 0:
		// No contest with a zero cookie; libsrt, which would refuse it, never sends one.
		return rdvWait, nil
	case r.role == rdvDraw:
		r.peerID, r.peerCookie = hs.SocketID, hs.Cookie
		if r.role = cookieContest(r.req.Cookie, hs.Cookie); r.role == rdvDraw {
			return r.reject(RejectRdvCookie)
		}
	case hs.SocketID != r.peerID || hs.Cookie != r.peerCookie:
		return rdvWait, nil // not the peer of the contest
	}
	switch {
	case r.state == rdvWaving:
		if hs.Type == wire.HSConclusion && r.role == rdvResponder {
			return r.respond(ts, hs, perr, at)
		}
		// The peer waves, or (it heard us first) already concludes: conclude.
		r.state = rdvAttention
		return r.conclude(hs)
	case hs.Type == wire.HSWaveAHand:
		// It missed our conclusion (a belated wave after the HSRSP needs nothing).
		if r.state == rdvAttention {
			return rdvSend, nil
		}
		return rdvWait, nil
	case r.role == rdvResponder:
		return r.respond(ts, hs, perr, at)
	case perr != nil:
		return rdvWait, nil // a malformed answer: it repeats
	case hs.HSCmd != wire.ExtHSRsp:
		return rdvSend, nil // the responder's empty conclusion: our HSREQ again
	}
	open, err := checkHSRsp(r.rc, hs, r.seal, r.km, r.addr)
	if err != nil {
		act, _ := r.reject(errReject(err))
		return act, err
	}
	r.open = open
	r.peerHS, r.peerTS, r.peerAt = *hs, ts, at
	r.req = r.bare(wire.HSAgreement)
	return rdvSendDone, nil
}

// conclude makes req our conclusion, once the roles are known: the initiator's with HSREQ
// (KMREQ, stream id), the responder's empty.
func (r *rdv) conclude(hs *wire.Handshake) (rdvAction, error) {
	r.req.Type = wire.HSConclusion
	if r.role == rdvResponder {
		return rdvSend, nil
	}
	// The peer's advertised key length wins, as with a libsrt initiator (not SRTO_SENDER).
	seal, km, err := putHSReq(&r.req, r.rc, keyLength(r.rc.PBKeyLen, hs.Encryption, true))
	if err != nil {
		return rdvWait, err
	}
	r.seal, r.km = seal, km
	return rdvSend, nil
}

// respond answers the initiator's conclusion: HSRSP (KMRSP) once its HSREQ passed the checks a
// listener makes, then the same answer to every repeat; a rejection otherwise.
func (r *rdv) respond(ts uint32, hs *wire.Handshake, perr error, at int64) (rdvAction, error) {
	if r.state == rdvInitiated {
		return rdvSend, nil
	}
	if perr == nil && hs.Extension == 0 && hs.HSCmd == 0 && hs.KMCmd == 0 {
		// An empty conclusion (only a responder sends one): ours, until the HSREQ comes.
		r.state = rdvAttention
		return r.conclude(hs)
	}
	reason := checkHSReq(r.rc, hs, perr)
	if reason == RejectNone && r.rc.Passphrase != "" {
		r.open, r.seal, reason = openCallerKM(r.rc, hs.KM)
	}
	if reason != RejectNone {
		return r.reject(reason)
	}
	r.peerHS, r.peerTS, r.peerAt = *hs, ts, at
	if hs.HasStreamID {
		r.rc.StreamID = hs.StreamID()
	}
	var km []byte
	if r.open != nil {
		km = r.peerHS.KM
	}
	rcvLat, sndLat := latencies(r.rc, &hs.HS)
	r.req.Type = wire.HSConclusion
	putHSRsp(&r.req, rcvLat, sndLat, km)
	r.state = rdvInitiated
	return rdvSend, nil
}

// rendezvous runs a rendezvous handshake on m's own socket, which it closes on failure.
func (m *mux) rendezvous(ctx context.Context, d *dialer, r *rdv) (*Conn, error) {
	c, err := m.rdvHandshake(ctx, d, r)
	if err != nil {
		m.close()
		return nil, fmt.Errorf("srt rendezvous %s: %w", r.addr, err)
	}
	return c, nil
}

// rdvHandshake sends r's datagrams, repeated every handshakeResend, until the connection is
// made, refused, or the time is up.
func (m *mux) rdvHandshake(ctx context.Context, d *dialer, r *rdv) (*Conn, error) {
	s := newHSSender(m, d.peer)
	send := func() { s.send(r.peerID, &r.req) }
	return m.handshakeLoop(ctx, d, r.rc.ConnectTimeout, send, func(dg hsDatagram) (*Conn, bool, error) {
		act, err := r.receive(dg)
		switch {
		case err != nil:
			if act == rdvSend {
				send() // our rejection, once
			}
			return nil, false, err
		case act == rdvDone || act == rdvSendDone:
			// The connection first, so that it takes what the peer sends once it has our
			// agreement.
			c := m.rdvConn(d, r)
			if act == rdvSendDone {
				send()
			}
			return c, false, nil
		case act == rdvSend:
			send()
			return nil, true, nil
		}
		return nil, false, nil
	})
}

// rdvConn makes the connection of a concluded rendezvous.
func (m *mux) rdvConn(d *dialer, r *rdv) *Conn {
	agree := r.bare(wire.HSAgreement)
	return m.ownConn(d, r.rc, r.req.InitialSeq, r.peerTS, &r.peerHS, r.open, r.seal, r.peerAt,
		appendHandshakePacket(nil, r.peerID, 0, &agree))
}
