package link

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// dialer is a caller's handshake in progress: the read loop hands it the handshake datagrams
// addressed to its socket id.
type dialer struct {
	id   uint32
	peer netip.AddrPort
	ch   chan hsDatagram
}

type hsDatagram struct {
	b  []byte
	at int64
}

func (d *dialer) deliver(b []byte, from netip.AddrPort, now int64) {
	if from != d.peer {
		return
	}
	select {
	case d.ch <- hsDatagram{append([]byte(nil), b...), now}:
	default:
	}
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
	ra, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	network := "udp4"
	if ra.IP.To4() == nil {
		network = "udp6"
	}
	pc, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	tr, err := newUDPTransport(pc)
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	peer := ra.AddrPort()
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	m := newMux(tr, rc.Log.With("srt_dial", addr), true)
	d := &dialer{peer: peer, ch: make(chan hsDatagram, 8)}
	m.mu.Lock()
	d.id = m.newSocketIDLocked()
	m.mu.Unlock()
	m.dl.Store(d)
	m.start()
	c, err := m.handshake(ctx, d, &rc, addr)
	if err != nil {
		m.close()
		return nil, fmt.Errorf("srt dial %s: %w", addr, err)
	}
	return c, nil
}

// handshake runs the caller's side: induction, then conclusion, each repeated until answered.
func (m *mux) handshake(ctx context.Context, d *dialer, rc *resolved, addr string) (*Conn, error) {
	deadline := time.NewTimer(rc.ConnectTimeout)
	defer deadline.Stop()
	resend := time.NewTicker(handshakeResend * time.Microsecond)
	defer resend.Stop()
	to := net.UDPAddrFromAddrPort(d.peer)
	var isnb [4]byte
	randRead(isnb[:])
	isn := (uint32(isnb[0])<<24 | uint32(isnb[1])<<16 | uint32(isnb[2])<<8 | uint32(isnb[3])) & wire.SeqMask

	req := wire.Handshake{
		Version:    wire.HSVersion4,
		Extension:  wire.UDTDgram,
		InitialSeq: isn,
		MTU:        mss,
		FlowWindow: uint32(rc.rcvPkts),
		Type:       wire.HSInduction,
		SocketID:   d.id,
	}
	req.PutPeerAddr(d.peer.Addr())
	send := func() {
		b := appendHandshakePacket(nil, 0, uint32(m.now()), &req)
		_, _ = m.tr.(*udpTransport).c.WriteToUDP(b, to)
	}
	if _, ok := m.tr.(*udpTransport); !ok {
		return nil, fmt.Errorf("caller needs a UDP socket: %w", ErrConfig)
	}
	send()
	var seal *crypt.Sender
	var km []byte
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, ErrConnectTimeout
		case <-resend.C:
			send()
		case dg := <-d.ch:
			var ctl wire.Control
			var hs wire.Handshake
			if wire.ParseControl(dg.b, &ctl) != nil || wire.ParseHandshake(ctl.CIF, &hs) != nil {
				continue
			}
			if hs.Type.IsRejection() {
				return nil, &RejectError{Reason: Reject(hs.Type.RejectReason()), Addr: addr}
			}
			switch {
			case req.Type == wire.HSInduction && hs.Type == wire.HSInduction:
				if hs.Version < wire.HSVersion5 || hs.Extension != wire.SRTMagic {
					return nil, ErrVersion
				}
				keyLen := rc.PBKeyLen
				if keyLen == 0 && hs.Encryption >= 2 && hs.Encryption <= 4 {
					keyLen = int(hs.Encryption) * 8
				}
				if keyLen == 0 {
					keyLen = 16
				}
				req.Version, req.Type, req.Cookie = wire.HSVersion5, wire.HSConclusion, hs.Cookie
				req.Extension = wire.HSExtHSReq
				lat := latencyMS(int64(rc.Latency / 1000))
				req.HSCmd = wire.ExtHSReq
				req.HS = wire.HSExt{Version: srtVersion, Flags: srtFlags, RecvDelay: lat, SendDelay: lat}
				if rc.Passphrase != "" {
					var err error
					if seal, err = crypt.NewSender(rc.Passphrase, keyLen, rc.refresh()); err != nil {
						return nil, err
					}
					km = seal.KM(nil)
					req.Encryption = uint16(keyLen / 8)
					req.Extension |= wire.HSExtKMReq
					req.KMCmd, req.KM = wire.ExtKMReq, km
				}
				if rc.StreamID != "" {
					if err := req.SetStreamID(rc.StreamID); err != nil {
						return nil, err
					}
					req.Extension |= wire.HSExtConfig
				}
				send()
				resend.Reset(handshakeResend * time.Microsecond)
			case req.Type == wire.HSConclusion && hs.Type == wire.HSConclusion:
				return m.concluded(d, rc, &req, &ctl, &hs, seal, km, dg.at, addr)
			}
		}
	}
}

// concluded checks the listener's conclusion answer and makes the connection.
func (m *mux) concluded(d *dialer, rc *resolved, req *wire.Handshake, ctl *wire.Control, hs *wire.Handshake,
	seal *crypt.Sender, km []byte, at int64, addr string) (*Conn, error) {
	if hs.Version < wire.HSVersion5 || hs.HSCmd != wire.ExtHSRsp || hs.SocketID == 0 || hs.InitialSeq > wire.SeqMask {
		return nil, fmt.Errorf("conclusion answer without HSRSP, socket id or sequence number: %w", ErrProtocol)
	}
	var open *crypt.Receiver
	switch {
	case seal != nil && hs.KMCmd != wire.ExtKMRsp:
		return nil, &RejectError{Reason: RejectUnsecure, Addr: addr}
	case seal != nil:
		if st, ok := crypt.ParseKMState(hs.KM); ok {
			if r := kmStateReject(st); r != RejectNone {
				return nil, &RejectError{Reason: r, Addr: addr}
			}
		}
		// The listener encrypts what it sends with our keys.
		var err error
		if open, err = crypt.NewReceiver(rc.Passphrase, km); err != nil {
			return nil, err
		}
	case hs.KMCmd == wire.ExtKMRsp:
		// The listener encrypts and we do not.
		return nil, &RejectError{Reason: RejectUnsecure, Addr: addr}
	}
	c := newConn(m, rc, d.id, hs.SocketID, d.peer, at)
	c.ownMux = true
	c.t0 = 0 // our timestamps count from the socket's start, as the handshake's did
	c.rcrypt, c.scrypt = open, seal
	c.peerVer = hs.HS.Version
	c.peerNAK = hs.HS.Flags&wire.FlagNAKReport != 0
	lat := int64(rc.Latency / 1000)
	c.rcvLatency = max(lat, int64(hs.HS.SendDelay)*1000)
	c.sndLatency = max(lat, int64(hs.HS.RecvDelay)*1000)
	c.rcv.init(hs.InitialSeq, rc.rcvPkts, at-int64(ctl.Timestamp), ctl.Timestamp, at)
	c.snd.init(req.InitialSeq, rc.sndPkts, int(min(hs.FlowWindow, 1<<20)), at)
	m.mu.Lock()
	m.conns[c.id] = c
	m.dl.Store(nil)
	m.mu.Unlock()
	c.mu.Lock()
	m.clk.schedule(c, c.nextDeadlineLocked(m.now()))
	c.mu.Unlock()
	c.log.Debug("srt connected", "latency", c.Latency(), "peer_latency", c.PeerLatency())
	return c, nil
}
