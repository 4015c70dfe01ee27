package hostile

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// SRT handshake packets built by hand (draft-sharabayko-srt, "Handshake"), independent of
// sluice's own SRT stack: what a hostile caller sends.
const (
	// srtHeaderLen is a packet header: a control packet's type word, its type-specific word,
	// its timestamp and its destination socket id.
	srtHeaderLen = 16
	// srtCIFLen is the handshake's fixed part: version, encryption and extension fields,
	// initial sequence number, MTU, flow window, handshake type, socket id, SYN cookie and the
	// 16-byte peer address.
	srtCIFLen = 48

	srtInduction  = 0x00000001 // handshake type of the induction phase
	srtConclusion = 0xFFFFFFFF // handshake type of the conclusion phase (also its acceptance)
	srtUDTDgram   = 2          // the extension field of an HSv4 induction request: UDT_DGRAM
	srtMagic      = 0x4A17     // the extension field of an HSv5 induction answer
	srtFlagHSReq  = 0x1        // conclusion extension flags: HSREQ present
	srtFlagConfig = 0x4        // ... and configuration (stream id) present
	srtExtHSReq   = 1          // extension block types
	srtExtSID     = 5
	// srtHSFlags: TSBPD send and receive, too-late packet drop, periodic NAK, retransmitted
	// flag, as libsrt's live mode sends.
	srtHSFlags = 0x01 | 0x02 | 0x08 | 0x10 | 0x20
	// srtVersion is the SRT version a caller announces: 1.5.1.
	srtVersion = 0x010501
)

// srtHandshake is the fixed part of a handshake.
type srtHandshake struct {
	version   uint32
	extension uint16
	typ       uint32
	socketID  uint32
	cookie    uint32
}

// packet returns the handshake as a control packet to dest, followed by ext (the extension
// area, which may be malformed on purpose).
func (h srtHandshake) packet(dest uint32, ext []byte) []byte {
	b := make([]byte, srtHeaderLen+srtCIFLen, srtHeaderLen+srtCIFLen+len(ext))
	binary.BigEndian.PutUint32(b[0:], 0x80000000) // control, type 0 (handshake), subtype 0
	binary.BigEndian.PutUint32(b[8:], 1)          // timestamp
	binary.BigEndian.PutUint32(b[12:], dest)
	c := b[srtHeaderLen:]
	binary.BigEndian.PutUint32(c[0:], h.version)
	binary.BigEndian.PutUint16(c[6:], h.extension) // encryption field 0
	binary.BigEndian.PutUint32(c[8:], 1000)        // initial sequence number
	binary.BigEndian.PutUint32(c[12:], 1500)       // MTU
	binary.BigEndian.PutUint32(c[16:], 8192)       // flow window
	binary.BigEndian.PutUint32(c[20:], h.typ)
	binary.BigEndian.PutUint32(c[24:], h.socketID)
	binary.BigEndian.PutUint32(c[28:], h.cookie)
	copy(c[32:], net.IPv4(127, 0, 0, 1).To4())
	return append(b, ext...)
}

// srtExt returns an extension block: its type, its length in 4-byte words, then body.
func srtExt(typ uint16, body []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)/4))
	return append(b, body...)
}

// srtHSReq is the HSREQ block of a live-mode caller with 200 ms latency both ways.
func srtHSReq() []byte {
	body := binary.BigEndian.AppendUint32(nil, srtVersion)
	body = binary.BigEndian.AppendUint32(body, srtHSFlags)
	body = binary.BigEndian.AppendUint32(body, 200<<16|200)
	return srtExt(srtExtHSReq, body)
}

// srtSID is the stream id block: the string padded to whole words, each word's bytes in
// reverse order (libsrt's encoding).
func srtSID(id string) []byte {
	body := []byte(id)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	for i := 0; i < len(body); i += 4 {
		body[i], body[i+1], body[i+2], body[i+3] = body[i+3], body[i+2], body[i+1], body[i]
	}
	return srtExt(srtExtSID, body)
}

// srtPeer is a hostile SRT caller on its own UDP socket.
type srtPeer struct {
	t *testing.T
	c *net.UDPConn
}

func newSRTPeer(t *testing.T, addr string) *srtPeer {
	t.Helper()
	return &srtPeer{t: t, c: testutil.DialUDP(t, addr)}
}

func (p *srtPeer) send(b []byte) {
	if _, err := p.c.Write(b); err != nil {
		p.t.Fatalf("srt send: %v", err)
	}
}

// answer waits up to d for a handshake addressed to socketID and returns its handshake type
// and the sender's socket id.
func (p *srtPeer) answer(socketID uint32, d time.Duration) (typ, from, cookie uint32, ok bool) {
	deadline := time.Now().Add(d)
	buf := make([]byte, 2048)
	for {
		_ = p.c.SetReadDeadline(deadline)
		n, err := p.c.Read(buf)
		if err != nil {
			return 0, 0, 0, false
		}
		b := buf[:n]
		if n < srtHeaderLen+srtCIFLen || binary.BigEndian.Uint32(b[0:]) != 0x80000000 || binary.BigEndian.Uint32(b[12:]) != socketID {
			continue // not a handshake for this socket id (a keep-alive, a stray answer)
		}
		c := b[srtHeaderLen:]
		return binary.BigEndian.Uint32(c[20:]), binary.BigEndian.Uint32(c[24:]), binary.BigEndian.Uint32(c[28:]), true
	}
}

// cookie runs the induction phase for socketID and returns the listener's SYN cookie.
func (p *srtPeer) cookie(socketID uint32) uint32 {
	p.t.Helper()
	p.send(srtHandshake{version: 4, extension: srtUDTDgram, typ: srtInduction, socketID: socketID}.packet(0, nil))
	typ, _, cookie, ok := p.answer(socketID, 3*time.Second)
	if !ok || typ != srtInduction {
		p.t.Fatalf("srt induction of socket %d: answer type %#x ok=%v", socketID, typ, ok)
	}
	return cookie
}

// conclusion sends an HSv5 conclusion for socketID with cookie and the extension area ext, and
// returns the answer's handshake type (srtConclusion: accepted; 1000 and up: a rejection) and
// the listener's socket id; ok is false when nothing came within d.
func (p *srtPeer) conclusion(socketID, cookie uint32, flags uint16, ext []byte, d time.Duration) (typ, from uint32, ok bool) {
	p.send(srtHandshake{version: 5, extension: flags, typ: srtConclusion, socketID: socketID, cookie: cookie}.packet(0, ext))
	typ, from, _, ok = p.answer(socketID, d)
	return typ, from, ok
}
