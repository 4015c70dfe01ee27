package link

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// FuzzRendezvous feeds one side of a rendezvous arbitrary datagram sequences through its mux's
// dispatch (in memory, no goroutine), the handshake state machine, and once connected the
// connection. The first input byte picks the configuration (bit 0: a passphrase; bit 1: our
// cookie loses the contest against fuzzCookie); then records as FuzzListener's: a byte of
// flags, a byte of time step (milliseconds), two bytes of length, the datagram. Flags: bit 0,
// from another address; bit 1, to our socket id (the fuzzer cannot guess it); bit 2, with the
// pinned peer's socket id and cookie in a handshake. Nothing may panic, the handshake queue
// and the connection stay bounded.
func FuzzRendezvous(f *testing.F) {
	for _, seed := range rdvFuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) { runRendezvousInput(t, in) })
}

// fuzzCookie and fuzzPeerID are the peer's in the seeds.
const (
	fuzzCookie = 0x10000000
	fuzzPeerID = 0x200
)

func runRendezvousInput(t *testing.T, in []byte) {
	if len(in) == 0 {
		return
	}
	cfg := Config{MaxConns: 1, RecvBuffer: 64 * 1316, SendBuffer: 64 * 1316, Latency: 50e6}
	if in[0]&1 != 0 {
		cfg.Passphrase = "fuzz-passphrase"
	}
	ours := uint32(fuzzCookie + 1)
	if in[0]&2 != 0 {
		ours = fuzzCookie - 1
	}
	in = in[1:]
	rc, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	rc.Log = discardLog()
	peer := netip.MustParseAddrPort("127.0.0.1:5000")
	other := netip.MustParseAddrPort("127.0.0.1:5001")
	m := newMux(&memTransport{}, rc.Log, true)
	d := &dialer{peer: peer, rdv: true, ch: make(chan hsDatagram, handshakeQueue)}
	m.mu.Lock()
	d.id = m.newSocketIDLocked()
	m.mu.Unlock()
	m.dl.Store(d)
	r := newRdv(&rc, d.id, ours, peer, "fuzz")
	var c *Conn
	var failed error
	now := int64(1_000_000)
	p := new(packet)
	out := newOutbox(2 * callerReadBatch)
	for records := 0; len(in) >= 4 && records < maxFuzzRecords; records++ {
		var flags byte
		flags, in = nextFuzzRecord(in, p, &now)
		p.from = peer
		if flags&1 != 0 {
			p.from = other
		}
		b := p.buf[:p.n]
		if p.n >= wire.HeaderSize && flags&2 != 0 {
			dest := d.id
			if c != nil {
				dest = c.id
			}
			binary.BigEndian.PutUint32(b[12:16], dest)
		}
		if p.n >= wire.HeaderSize+wire.HandshakeCIFLen && flags&4 != 0 && b[0] == 0x80 && b[1] == 0 {
			binary.BigEndian.PutUint32(b[wire.HeaderSize+24:], cmpOrU32(r.peerID, fuzzPeerID))
			binary.BigEndian.PutUint32(b[wire.HeaderSize+28:], cmpOrU32(r.peerCookie, fuzzCookie))
		}
		out.reset()
		if m.handle(p, now, out) {
			p = new(packet)
		}
		if len(d.ch) > cap(d.ch) {
			t.Fatalf("handshake queue %d over %d", len(d.ch), cap(d.ch))
		}
		for c == nil && failed == nil && len(d.ch) > 0 {
			act, err := r.receive(<-d.ch)
			switch {
			case err != nil:
				failed = err
				m.dl.Store(nil)
			case act == rdvDone || act == rdvSendDone:
				c = m.rdvConn(d, r)
			}
			if r.role != rdvDraw && r.peerID == 0 {
				t.Fatal("a role without a peer")
			}
		}
		if c != nil {
			if _, _, broke := c.service(now, out); broke {
				m.remove(c)
			}
			readNow(c)
			if _, err := c.Write([]byte("fuzz")); err != nil && c.state == stateConnected {
				t.Fatal(err)
			}
			checkConnBounded(t, c)
		}
	}
	if c != nil {
		c.breakConn(ErrClosed)
		c.mu.Lock()
		c.rcv.buf.release()
		c.mu.Unlock()
	}
	out.reset()
}

func cmpOrU32(a, b uint32) uint32 {
	if a != 0 {
		return a
	}
	return b
}

// checkConnBounded fails when c's buffers outgrew their limits.
func checkConnBounded(t *testing.T, c *Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, s := &c.rcv, &c.snd
	if r.buf.count > r.buf.limit || r.loss.len() > r.buf.limit || s.buf.n > s.buf.limit || s.loss.len() > s.buf.n {
		t.Fatalf("unbounded connection state: rcv %d/%d loss %d, snd %d/%d loss %d",
			r.buf.count, r.buf.limit, r.loss.len(), s.buf.n, s.buf.limit, s.loss.len())
	}
}

// rdvFuzzSeeds are whole sessions of a peer: as the responder (our cookie wins) and as the
// initiator, with and without a passphrase, then data and control packets.
func rdvFuzzSeeds() [][]byte {
	rec := func(flags, step byte, d []byte) []byte {
		return append([]byte{flags, step, byte(len(d) >> 8), byte(len(d))}, d...)
	}
	base := wire.Handshake{Version: 5, InitialSeq: 777, MTU: 1500, FlowWindow: 8192, SocketID: fuzzPeerID, Cookie: fuzzCookie}
	wave := base
	wave.Type = wire.HSWaveAHand
	empty := base
	empty.Type = wire.HSConclusion
	rsp := empty
	putHSRsp(&rsp, 120_000, 120_000, nil)
	req := empty
	rc, _ := Config{StreamID: "fuzz/live"}.resolve()
	_, _, _ = putHSReq(&req, &rc, 16)
	agree := base
	agree.Type = wire.HSAgreement
	hs := func(h wire.Handshake) []byte { return appendHandshakePacket(nil, 0, 100, &h) }
	data := wire.AppendData(nil, &wire.Data{Seq: 777, Position: wire.PosSolo, InOrder: true, MsgNo: 1, Payload: []byte("payload")})
	ack := wire.AppendControlHeader(nil, &wire.Control{Type: wire.CtrlKeepAlive})
	ack = wire.AppendEmptyCIF(ack)
	var seeds [][]byte
	for _, cfg := range []byte{0, 1, 2, 3} {
		var s []byte
		s = append(s, cfg)
		s = append(s, rec(0, 1, hs(wave))...)
		if cfg&2 == 0 { // we initiate: the peer answers our HSREQ
			s = append(s, rec(2, 1, hs(empty))...)
			s = append(s, rec(2, 1, hs(rsp))...)
		} else { // we respond: the peer's HSREQ, its agreement
			s = append(s, rec(2, 1, hs(req))...)
			s = append(s, rec(2, 1, hs(req))...)
			s = append(s, rec(2, 1, hs(agree))...)
		}
		s = append(s, rec(2, 1, hs(rsp))...)
		s = append(s, rec(2, 5, data)...)
		s = append(s, rec(2, 5, ack)...)
		s = append(s, rec(3, 5, data)...)
		seeds = append(seeds, s)
	}
	return seeds
}

// TestRendezvousFuzzSeedsConnect checks that the seeds get the handshake to a connection in both
// roles, so that the fuzzer starts from there.
func TestRendezvousFuzzSeedsConnect(t *testing.T) {
	for i, s := range rdvFuzzSeeds() {
		rc, _ := Config{}.resolve()
		r := newRdv(&rc, 0x100, fuzzCookie+1, netip.AddrPort{}, "seed")
		if s[0]&2 != 0 {
			r.req.Cookie = fuzzCookie - 1
		}
		if s[0]&1 != 0 {
			continue // the seed's HSREQ has no key material: refused
		}
		done := false
		for in := s[1:]; len(in) >= 4 && !done; {
			n := int(binary.BigEndian.Uint16(in[2:4]))
			b := append([]byte(nil), in[4:4+n]...)
			in = in[4+n:]
			if len(b) >= 16 {
				binary.BigEndian.PutUint32(b[12:16], 0x100)
			}
			act, err := r.receive(hsDatagram{b: b})
			if err != nil {
				t.Fatalf("seed %d: %v", i, err)
			}
			done = act == rdvDone || act == rdvSendDone
		}
		if !done {
			t.Errorf("seed %d did not connect: role %d state %d", i, r.role, r.state)
		}
	}
}
