package link

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// rawPeer speaks SRT by hand over a plain UDP socket: hostile and legacy callers.
type rawPeer struct {
	t  testing.TB
	c  *net.UDPConn
	id uint32
}

func newRawPeer(t testing.TB, addr string) *rawPeer {
	t.Helper()
	return &rawPeer{t: t, c: testutil.DialUDP(t, addr), id: 0x1234567}
}

func (r *rawPeer) send(b []byte) {
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// recv returns the next datagram, or nil after d.
func (r *rawPeer) recv(d time.Duration) []byte {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	b := make([]byte, 2048)
	n, err := r.c.Read(b)
	if err != nil {
		return nil
	}
	return b[:n]
}

// recvHandshake waits for a handshake datagram.
func (r *rawPeer) recvHandshake(d time.Duration) (wire.Control, wire.Handshake, bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		b := r.recv(time.Until(deadline))
		if b == nil {
			break
		}
		var ctl wire.Control
		var hs wire.Handshake
		if wire.ParseControl(b, &ctl) == nil && ctl.Type == wire.CtrlHandshake && wire.ParseHandshake(ctl.CIF, &hs) == nil {
			return ctl, hs, true
		}
	}
	return wire.Control{}, wire.Handshake{}, false
}

func (r *rawPeer) handshake(dest uint32, hs *wire.Handshake) []byte {
	return appendHandshakePacket(nil, dest, 100, hs)
}

// induction runs the induction phase and returns the cookie.
func (r *rawPeer) induction() uint32 {
	r.t.Helper()
	hs := wire.Handshake{Version: 4, Extension: wire.UDTDgram, InitialSeq: 1000, MTU: 1500, FlowWindow: 8192,
		Type: wire.HSInduction, SocketID: r.id}
	hs.PutPeerAddr(netip.MustParseAddr("127.0.0.1"))
	r.send(r.handshake(0, &hs))
	_, rsp, ok := r.recvHandshake(2 * time.Second)
	if !ok || rsp.Type != wire.HSInduction || rsp.Version != 5 || rsp.Extension != wire.SRTMagic {
		r.t.Fatalf("induction answer %+v ok=%v", rsp, ok)
	}
	return rsp.Cookie
}

// conclusion returns an HSv5 conclusion like libsrt's, for the caller to change.
func (r *rawPeer) conclusion(cookie uint32) wire.Handshake {
	hs := wire.Handshake{Version: 5, Extension: wire.HSExtHSReq, InitialSeq: 1000, MTU: 1500, FlowWindow: 8192,
		Type: wire.HSConclusion, SocketID: r.id, Cookie: cookie, HSCmd: wire.ExtHSReq,
		HS: wire.HSExt{Version: 0x010501, Flags: srtFlags, RecvDelay: 120, SendDelay: 120}}
	hs.PutPeerAddr(netip.MustParseAddr("127.0.0.1"))
	return hs
}
