package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// rdvPair makes a rendezvous between two sluice sockets on loopback ports, with cfgA and cfgB
// and our cookies (0: random); it returns both sides' results.
func rdvPair(t testing.TB, cfgA, cfgB Config, cookieA, cookieB uint32) (a, b *Conn, errA, errB error) {
	t.Helper()
	pa, pb := udpPort(t), udpPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a, errA = rendezvousCookie(ctx, loopback(pa), loopback(pb), cfgA, cookieA)
	}()
	go func() {
		defer wg.Done()
		b, errB = rendezvousCookie(ctx, loopback(pb), loopback(pa), cfgB, cookieB)
	}()
	wg.Wait()
	for _, c := range []*Conn{a, b} {
		if c != nil {
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	return a, b, errA, errB
}

// exchange writes n numbered messages each way and checks that each side reads them all, in
// order.
func exchange(t testing.TB, a, b *Conn, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, d := range []struct {
		name     string
		from, to *Conn
	}{{"a to b", a, b}, {"b to a", b, a}} {
		wg.Add(2)
		want := make([][]byte, n)
		for i := range want {
			want[i] = bytes.Repeat([]byte(fmt.Sprintf("%s %06d|", d.name, i)), 1+i%80)
		}
		go func() {
			defer wg.Done()
			for _, m := range want {
				if _, err := d.from.Write(m); err != nil {
					t.Errorf("%s: write: %v", d.name, err)
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := readAll(ctx, d.to, len(bytes.Join(want, nil)))
			if err != nil {
				t.Errorf("%s: after %d of %d messages: %v", d.name, len(got), n, err)
				return
			}
			if len(got) != n {
				t.Errorf("%s: %d messages, want %d", d.name, len(got), n)
				return
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s: message %d differs", d.name, i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRendezvousLoopback: two sluice sockets meet, without and with a passphrase, with a stream
// id, and carry data both ways; each side's latency is the larger wish.
func TestRendezvousLoopback(t *testing.T) {
	for _, c := range []struct {
		name       string
		passphrase string
		sid        string
	}{
		{"plain", "", ""},
		{"passphrase", "rendezvous-secret", ""},
		{"stream id", "rendezvous-secret", "rdv/live/cam1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, errA, errB := rdvPair(t,
				Config{Latency: 80 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				Config{Latency: 150 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				0, 0)
			if errA != nil || errB != nil {
				t.Fatalf("rendezvous: %v / %v", errA, errB)
			}
			for _, x := range []*Conn{a, b} {
				if x.Latency() != 150*time.Millisecond || x.PeerLatency() != 150*time.Millisecond {
					t.Errorf("latency %v / %v, want 150 ms both ways", x.Latency(), x.PeerLatency())
				}
				if x.Encrypted() != (c.passphrase != "") || x.StreamID() != c.sid {
					t.Errorf("encrypted %v stream id %q", x.Encrypted(), x.StreamID())
				}
			}
			if a.RemoteAddr().String() != b.LocalAddr().String() || b.RemoteAddr().String() != a.LocalAddr().String() {
				t.Errorf("addresses %v-%v, %v-%v", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr())
			}
			exchange(t, a, b, 500)
		})
	}
}

// TestInteropRendezvousLibsrtSends: libsrt in rendezvous mode → our Rendezvous.
func TestInteropRendezvousLibsrtSends(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			in, ours, its := udpPort(t), udpPort(t), udpPort(t)
			startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=rendezvous&port=%d&latency=200%s", loopback(ours), its, kmQuery(pass, 0)))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 120 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Latency() != 200*time.Millisecond || c.Encrypted() != (pass != "") {
				t.Errorf("latency %v encrypted %v", c.Latency(), c.Encrypted())
			}
			relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt rendezvous to ours")
		})
	}
}

// TestInteropRendezvousLibsrtReads: our Rendezvous → libsrt in rendezvous mode.
func TestInteropRendezvousLibsrtReads(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			all := bytes.Join(clip, nil)
			ours, its := udpPort(t), udpPort(t)
			s := startSLT(t, fmt.Sprintf("srt://%s?mode=rendezvous&port=%d%s", loopback(ours), its, kmQuery(pass, 0)), "file://con")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 200 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
				t.Fatal(err)
			}
			checkSLTOutput(t, s, c, all)
		})
	}
}

// TestRendezvousHostile: while one side of a rendezvous waits, another address floods it with
// garbage and forged handshakes (dropped and counted), its peer's address with junk handshakes
// (the queue stays bounded), and then the peer, played by hand, concludes and repeats its
// handshakes out of order after the connection: each repeat gets the agreement, nothing breaks.
func TestRendezvousHostile(t *testing.T) {
	pa := udpPort(t)
	peer := loopbackUDP(t)
	pb := peer.LocalAddr().(*net.UDPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		c   *Conn
		err error
	}
	res := make(chan result, 1)
	go func() {
		c, err := rendezvousCookie(ctx, loopback(pa), loopback(pb), Config{ConnectTimeout: 15 * time.Second, Log: discardLog()}, 0x40000000)
		res <- result{c, err}
	}()
	// Our side's first wave.
	recvHS := func(want wire.HandshakeType) (wire.Control, wire.Handshake) {
		t.Helper()
		buf := make([]byte, 2048)
		for {
			_ = peer.SetReadDeadline(time.Now().Add(3 * time.Second))
			n, _, err := peer.ReadFromUDP(buf)
			if err != nil {
				t.Fatalf("waiting for %v: %v", want, err)
			}
			var ctl wire.Control
			var hs wire.Handshake
			if wire.ParseControl(buf[:n], &ctl) == nil && ctl.Type == wire.CtrlHandshake && wire.ParseHandshake(ctl.CIF, &hs) == nil && hs.Type == want {
				return ctl, hs
			}
		}
	}
	_, wave := recvHS(wire.HSWaveAHand)
	if wave.Version != 5 || wave.Cookie != 0x40000000 || wave.SocketID == 0 || wave.HSCmd != 0 {
		t.Fatalf("wave %+v", wave)
	}
	ours := wave.SocketID
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: pa}

	// The flood from another address: all dropped, none reaches the handshake.
	attacker := loopbackUDP(t)
	rng := splitmix(5)
	buf := make([]byte, 1500)
	const flood = 3000
	for i := range flood {
		n := 16 + int(rng()%uint64(len(buf)-16))
		for j := range n {
			buf[j] = byte(rng())
		}
		switch i % 3 {
		case 0: // a wave that would win, or a rejection, to socket 0 or ours
			hs := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: 9, Cookie: 0x7FFFFFFF}
			if i%2 == 0 {
				hs.Type = wire.Rejection(uint32(RejectBadSecret))
			}
			n = copy(buf, appendHandshakePacket(nil, uint32(i%2)*ours, 1, &hs))
		case 1:
			buf[0], buf[1] = 0x80, 0
			binary.BigEndian.PutUint32(buf[12:], ours)
		}
		_, _ = attacker.WriteToUDP(buf[:n], to)
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	// Junk from the peer's own address: handshakes of other sockets, truncated ones.
	before := heapInUse()
	for i := range 20000 {
		hs := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: uint32(1000 + i), Cookie: 0}
		b := appendHandshakePacket(nil, 0, 1, &hs)
		if i%2 == 0 {
			b = b[:16+40]
		}
		_, _ = peer.WriteToUDP(b, to)
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	if grown := int64(heapInUse()) - int64(before); grown > 1<<20 {
		t.Errorf("heap grew %d bytes during the junk", grown)
	}
	// The peer: its wave loses the contest; our side concludes with HSREQ.
	pw := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: 0x777, Cookie: 0x20000000, InitialSeq: 5000, MTU: 1500, FlowWindow: 8192}
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, 0, 1, &pw), to)
	ctl, req := recvHS(wire.HSConclusion)
	if ctl.DestSocket != 0x777 || req.HSCmd != wire.ExtHSReq || req.SocketID != ours {
		t.Fatalf("conclusion to %#x: %+v", ctl.DestSocket, req)
	}
	// A conclusion of another cookie is ignored; the HSRSP concludes.
	rsp := pw
	rsp.Type, rsp.Cookie = wire.HSConclusion, 0x20000001
	putHSRsp(&rsp, 120_000, 120_000, nil)
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 2, &rsp), to)
	rsp.Cookie = 0x20000000
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 3, &rsp), to)
	recvHS(wire.HSAgreement)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.c
	defer c.Close()
	if d := c.m.dropped.Load(); d < flood*9/10 {
		t.Errorf("%d datagrams dropped, want the flood's %d", d, flood)
	}
	// After the connection: repeated and belated handshakes each get the agreement; a
	// rejection and garbage change nothing.
	for _, h := range []wire.Handshake{rsp, pw, rsp} {
		_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 4, &h), to)
		recvHS(wire.HSAgreement)
	}
	rej := pw
	rej.Type = wire.Rejection(uint32(RejectPeer))
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 5, &rej), to)
	_, _ = peer.WriteToUDP([]byte{0x80, 0, 0, 0, 1, 2, 3}, to)
	if _, err := c.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	for {
		_ = peer.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, _, err := peer.ReadFromUDP(buf)
		if err != nil {
			t.Fatal("no data after the hostile handshakes")
		}
		var d wire.Data
		if buf[0]&0x80 == 0 && wire.ParseData(buf[:n], &d) == nil {
			if string(d.Payload) != "still here" || d.Seq != req.InitialSeq || d.DestSocket != 0x777 {
				t.Fatalf("data %+v", d)
			}
			break
		}
	}
}

// libsrtCookie reads the cookie of the first wave-a-hand srt-live-transmit sends to loopback
// port ours: libsrt keeps it for the whole attempt, so the test can pick our role.
func libsrtCookie(t *testing.T, ours int) uint32 {
	t.Helper()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ours})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	buf := make([]byte, 2048)
	for {
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("no wave-a-hand from libsrt: %v", err)
		}
		var ctl wire.Control
		var hs wire.Handshake
		if wire.ParseControl(buf[:n], &ctl) == nil && wire.ParseHandshake(ctl.CIF, &hs) == nil &&
			hs.Type == wire.HSWaveAHand && hs.Version == 5 && hs.Cookie != 0 {
			return hs.Cookie
		}
	}
}

// TestInteropRendezvousRoles: with libsrt as the responder and as the initiator (our cookie
// picked against its), libsrt sends to us, encrypted with the initiator's keys, and we report
// the initiator's stream id. The key length is libsrt's 32 bytes in both roles: as the
// initiator we take the responder's advertised length over our 16 (what libsrt does without
// SRTO_SENDER), and srt-live-transmit, which sets SRTO_SENDER on its output, keeps its own.
func TestInteropRendezvousRoles(t *testing.T) {
	for _, initiator := range []bool{true, false} {
		t.Run(fmt.Sprintf("sluice initiator %v", initiator), func(t *testing.T) {
			clip := chunks(testClip(t))
			in, ours, its := udpPort(t), udpPort(t), udpPort(t)
			startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=rendezvous&port=%d&latency=200&streamid=from-libsrt%s",
				loopback(ours), its, kmQuery("interop-secret", 32)))
			cookie := libsrtCookie(t, ours) - 1
			wantKey, wantSID := 32, "from-libsrt"
			if initiator {
				cookie += 2
				wantSID = "from-sluice"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := rendezvousCookie(ctx, loopback(ours), loopback(its),
				Config{Passphrase: "interop-secret", PBKeyLen: 16, StreamID: "from-sluice"}, cookie)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.rcrypt == nil || c.scrypt == nil || c.rcrypt.KeyLen() != wantKey || c.scrypt.KeyLen() != wantKey || c.StreamID() != wantSID {
				t.Errorf("keys %v %v, stream id %q; want %d-byte keys, %q", c.rcrypt, c.scrypt, c.StreamID(), wantKey, wantSID)
			}
			relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt rendezvous to ours")
		})
	}
}

// TestInteropRendezvousRefused: different passphrases, and a passphrase on one side only, end
// our Rendezvous with libsrt's reason, whichever side is the initiator. libsrt 1.5.1 as the
// responder sends no rejection handshake in rendezvous mode (1.5.2 does, #2667), only a
// shutdown: then our side reports RejectPeer.
func TestInteropRendezvousRefused(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, its string
		want      error
	}{
		{"passphrases differ", "passphrase-one", "passphrase-two", ErrBadPassphrase},
		{"only ours", "passphrase-one", "", ErrNoPassphrase},
		{"only libsrt's", "", "passphrase-two", ErrNoPassphrase},
	} {
		for _, initiator := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, sluice initiator %v", c.name, initiator), func(t *testing.T) {
				ours, its := udpPort(t), udpPort(t)
				s := startSLT(t, "-a:no", fmt.Sprintf("srt://%s?mode=rendezvous&port=%d%s", loopback(ours), its, kmQuery(c.its, 0)), "file://con")
				cookie := libsrtCookie(t, ours) - 1
				if initiator {
					cookie += 2
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				conn, err := rendezvousCookie(ctx, loopback(ours), loopback(its), Config{Passphrase: c.ours}, cookie)
				if conn != nil {
					conn.Close()
				}
				var re *RejectError
				if !errors.As(err, &re) || (!errors.Is(err, c.want) && (!initiator || re.Reason != RejectPeer)) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
				select {
				case <-s.done:
				case <-time.After(10 * time.Second):
					t.Error("srt-live-transmit did not give up")
				}
			})
		}
	}
}

// pipeEnd is an in-memory transport joined to another: what one end writes the other reads,
// unless lose says it is lost (lose sees each datagram this end sends).
type pipeEnd struct {
	addr  netip.AddrPort
	in    chan []byte
	other *pipeEnd
	lose  func(b []byte) bool
	done  chan struct{}
	once  sync.Once
}

func pipePair(lossA, lossB func([]byte) bool) (*pipeEnd, *pipeEnd) {
	a := &pipeEnd{addr: netip.MustParseAddrPort("10.0.0.1:5000"), in: make(chan []byte, 1024), lose: lossA, done: make(chan struct{})}
	b := &pipeEnd{addr: netip.MustParseAddrPort("10.0.0.2:6000"), in: make(chan []byte, 1024), lose: lossB, done: make(chan struct{})}
	a.other, b.other = b, a
	return a, b
}

func (p *pipeEnd) readBatch(ps []*packet) (int, error) {
	select {
	case b := <-p.in:
		ps[0].n = copy(ps[0].buf[:], b)
		ps[0].from = p.other.addr
		return 1, nil
	case <-p.done:
		return 0, net.ErrClosed
	}
}

func (p *pipeEnd) writeBatch(o *outbox) error {
	for i := range o.n {
		var b []byte
		for _, piece := range o.msgs[i].Buffers {
			b = append(b, piece...)
		}
		if p.lose != nil && p.lose(b) {
			continue
		}
		select {
		case p.other.in <- b:
		default:
		}
	}
	return nil
}

func (p *pipeEnd) lagging() bool      { return false }
func (p *pipeEnd) setIdleHook(func()) {}
func (p *pipeEnd) localAddr() net.Addr {
	return net.UDPAddrFromAddrPort(p.addr)
}
func (p *pipeEnd) close() error { p.once.Do(func() { close(p.done) }); return nil }

// hsType returns the handshake type of datagram b and whether it carries HSREQ or HSRSP; ok is
// false for any other packet.
func hsType(b []byte) (typ wire.HandshakeType, ext, ok bool) {
	var ctl wire.Control
	var hs wire.Handshake
	if wire.ParseControl(b, &ctl) != nil || ctl.Type != wire.CtrlHandshake || wire.ParseHandshake(ctl.CIF, &hs) != nil {
		return 0, false, false
	}
	return hs.Type, hs.HSCmd != 0, true
}

// rdvOverPipe makes a rendezvous between two muxes joined by a pipe, with our cookies (a's
// larger: a is the initiator) and loss functions.
func rdvOverPipe(t *testing.T, cfgA, cfgB Config, lossA, lossB func([]byte) bool) (a, b *Conn, errA, errB error) {
	t.Helper()
	ta, tb := pipePair(lossA, lossB)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	run := func(tr *pipeEnd, cfg Config, cookie uint32, c **Conn, err *error) {
		defer wg.Done()
		rc, e := cfg.resolve()
		if e != nil {
			*err = e
			return
		}
		rc.Log = discardLog()
		m, d := startOwnMux(tr, tr.other.addr, true, rc.Log)
		*c, *err = m.rendezvous(ctx, d, newRdv(&rc, d.id, cookie, d.peer, tr.other.addr.String()))
		if *c != nil {
			t.Cleanup(func() { _ = (*c).Close() })
		}
	}
	wg.Add(2)
	go run(ta, cfgA, 0x20000000, &a, &errA)
	go run(tb, cfgB, 0x10000000, &b, &errB)
	wg.Wait()
	return a, b, errA, errB
}

// firstLost loses the first n handshakes of type typ (with HSREQ/HSRSP when ext) and counts
// every one sent.
func firstLost(n int, typ wire.HandshakeType, ext bool, sent *atomic.Int32) func([]byte) bool {
	var lost atomic.Int32
	return func(b []byte) bool {
		t, e, ok := hsType(b)
		if !ok || t != typ || e != ext {
			return false
		}
		sent.Add(1)
		return lost.Add(1) <= int32(n)
	}
}

// TestRendezvousLossOverPipe: the whole handshake over muxes (in memory), with its first
// packets lost, and the data both ways whole after it.
func TestRendezvousLossOverPipe(t *testing.T) {
	var waves, hsreq, hsrsp, agreements atomic.Int32
	for _, c := range []struct {
		name         string
		lossA, lossB func([]byte) bool
		count        *atomic.Int32
		want         int32 // the least sent of that kind
	}{
		{"waves lost", firstLost(2, wire.HSWaveAHand, false, &waves), firstLost(2, wire.HSWaveAHand, false, &waves), &waves, 4},
		{"HSREQ lost", firstLost(2, wire.HSConclusion, true, &hsreq), nil, &hsreq, 3},
		{"HSRSP lost", nil, firstLost(2, wire.HSConclusion, true, &hsrsp), &hsrsp, 3},
		// The initiator's connection answers the responder's repeated HSRSP with the agreement.
		{"agreement lost", firstLost(1, wire.HSAgreement, false, &agreements), nil, &agreements, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, errA, errB := rdvOverPipe(t, Config{Passphrase: "pipe-passphrase", StreamID: "pipe"},
				Config{Passphrase: "pipe-passphrase", Latency: 200 * time.Millisecond}, c.lossA, c.lossB)
			if errA != nil || errB != nil {
				t.Fatalf("%v / %v", errA, errB)
			}
			if n := c.count.Load(); n < c.want {
				t.Errorf("%d sent, want at least %d", n, c.want)
			}
			if b.StreamID() != "pipe" || a.Latency() != 200*time.Millisecond || !b.Encrypted() {
				t.Errorf("stream id %q latency %v encrypted %v", b.StreamID(), a.Latency(), b.Encrypted())
			}
			exchange(t, a, b, 200)
		})
	}
}

// TestRendezvousResponderConnectsOnData: every agreement is lost; the responder connects on the
// initiator's first data, and what was sent before is retransmitted.
func TestRendezvousResponderConnectsOnData(t *testing.T) {
	lossA := func(b []byte) bool { typ, _, ok := hsType(b); return ok && typ == wire.HSAgreement }
	ta, tb := pipePair(lossA, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, _ := Config{Log: discardLog()}.resolve()
	rc2 := rc
	mb, db := startOwnMux(tb, ta.addr, true, rc.Log)
	bc := make(chan *Conn, 1)
	go func() {
		c, err := mb.rendezvous(ctx, db, newRdv(&rc2, db.id, 0x10000000, ta.addr, "a"))
		if err != nil {
			t.Error(err)
		}
		bc <- c
	}()
	ma, da := startOwnMux(ta, tb.addr, true, rc.Log)
	a, err := ma.rendezvous(ctx, da, newRdv(&rc, da.id, 0x20000000, tb.addr, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	select {
	case <-bc:
		t.Fatal("the responder connected without the agreement or data")
	case <-time.After(700 * time.Millisecond):
	}
	if _, err := a.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	b := <-bc
	if b == nil {
		t.FailNow()
	}
	defer b.Close()
	buf := make([]byte, 100)
	_ = b.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := b.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
}

// TestRendezvousTimeouts: without a peer Rendezvous gives up after ConnectTimeout, or when ctx
// ends, and leaves nothing running.
func TestRendezvousTimeouts(t *testing.T) {
	start := time.Now()
	_, err := Rendezvous(context.Background(), loopback(udpPort(t)), loopback(udpPort(t)), Config{ConnectTimeout: 600 * time.Millisecond})
	if !errors.Is(err, ErrConnectTimeout) {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := Rendezvous(ctx, loopback(udpPort(t)), loopback(udpPort(t)), Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestCookieContest(t *testing.T) {
	for _, c := range []struct {
		ours, theirs uint32
		want         rdvRole
	}{
		{2, 1, rdvInitiator},
		{1, 2, rdvResponder},
		{7, 7, rdvDraw},
		{7, 0, rdvDraw}, // a zero cookie decides nothing (libsrt)
		{0x7FFFFFFF, 0x7FFFFFFE, rdvInitiator},
		{0x80000000, 0x7FFFFFFF, rdvInitiator},         // serial order: 1 ahead
		{0x00000001, 0xFFFFFFFF, rdvInitiator},         // across the wrap
		{0xFFFFFFFF, 0x00000001, rdvResponder},         // across the wrap
		{0xF0000000, 0x10000000, rdvResponder},         // 0xE0000000 ahead is behind
		{0x10000000, 0xF0000000, rdvInitiator},         //
		{0x80000001, 0x00000001, rdvResponder},         // exactly 2^31 apart: the larger signed wins
		{0x00000001, 0x80000001, rdvInitiator},         //
		{0x40000000, 0xC0000000, rdvInitiator},         //
		{0xC0000000, 0x40000000, rdvResponder},         //
		{0x12345678, 0x12345678 + 1<<31, rdvInitiator}, // 0x12345678 > int32(0x92345678) < 0
	} {
		if got := cookieContest(c.ours, c.theirs); got != c.want {
			t.Errorf("contest(%#x, %#x) = %d, want %d", c.ours, c.theirs, got, c.want)
		}
	}
	// Both sides always agree: one initiator, one responder.
	rng := splitmix(1)
	for i := range 100000 {
		a, b := uint32(rng())|1, uint32(rng())|1
		if i%4 == 0 {
			b = a + 1<<31
		}
		ra, rb := cookieContest(a, b), cookieContest(b, a)
		if a != b && (ra == rdvDraw || ra == rb) {
			t.Fatalf("contest(%#x, %#x) = %d, reversed %d", a, b, ra, rb)
		}
	}
}

// simSide is one side of a simulated rendezvous: the state machine, and what it received.
type simSide struct {
	name  string
	r     *rdv
	inbox [][]byte
	sent  []wire.HandshakeType
	done  bool
	err   error
}

// simLose decides whether the k-th datagram from side carrying hs is lost.
type simLose func(from string, k int, hs *wire.Handshake) bool

// simRendezvous runs two state machines against each other in rounds of 250 ms of virtual
// time: each side repeats its handshake, then handles what arrived. A connected initiator
// answers a repeated handshake with the agreement, as its connection does. reorder delivers
// each round's datagrams in reverse.
func simRendezvous(t *testing.T, a, b *simSide, lose simLose, reorder bool, rounds int) {
	t.Helper()
	k := 0
	now := int64(1_000_000)
	emit := func(from, to *simSide) {
		hs := from.r.req
		from.sent = append(from.sent, hs.Type)
		k++
		if lose != nil && lose(from.name, k, &hs) {
			return
		}
		to.inbox = append(to.inbox, appendHandshakePacket(nil, from.r.peerID, uint32(now), &hs))
	}
	for range rounds {
		now += handshakeResend
		for _, s := range [][2]*simSide{{a, b}, {b, a}} {
			if !s[0].done && s[0].err == nil {
				emit(s[0], s[1])
			}
		}
		for _, s := range [][2]*simSide{{a, b}, {b, a}} {
			me, peer := s[0], s[1]
			in := me.inbox
			me.inbox = nil
			if reorder {
				for i, j := 0, len(in)-1; i < j; i, j = i+1, j-1 {
					in[i], in[j] = in[j], in[i]
				}
			}
			for _, d := range in {
				if me.err != nil {
					break
				}
				if me.done {
					var ctl wire.Control
					var hs wire.Handshake
					if me.r.role == rdvInitiator && wire.ParseControl(d, &ctl) == nil && wire.ParseHandshake(ctl.CIF, &hs) == nil &&
						(hs.Type == wire.HSConclusion || hs.Type == wire.HSWaveAHand) {
						emit(me, peer) // the connection's answer
					}
					continue
				}
				act, err := me.r.receive(hsDatagram{b: d, at: now})
				switch {
				case err != nil:
					if act == rdvSend {
						emit(me, peer)
					}
					me.err = err
				case act == rdvSend:
					emit(me, peer)
				case act == rdvSendDone:
					me.done = true
					emit(me, peer)
				case act == rdvDone:
					me.done = true
				}
			}
		}
		if (a.done || a.err != nil) && (b.done || b.err != nil) {
			return
		}
	}
}

func newSimSide(t *testing.T, name string, cfg Config, cookie uint32) *simSide {
	t.Helper()
	rc, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	rc.Log = discardLog()
	id := uint32(0x100)
	if name == "b" {
		id = 0x200
	}
	return &simSide{name: name, r: newRdv(&rc, id, cookie, netip.MustParseAddrPort("127.0.0.1:9000"), name)}
}

// TestRendezvousStateMachine: the handshake concludes, with the right roles and the same
// negotiation on both sides, whatever datagrams are lost or come out of order.
func TestRendezvousStateMachine(t *testing.T) {
	isType := func(from string, typ wire.HandshakeType, ext bool) func(string, *wire.Handshake) bool {
		return func(f string, hs *wire.Handshake) bool {
			return f == from && hs.Type == typ && (hs.HSCmd != 0) == ext
		}
	}
	firstN := func(n int, match func(string, *wire.Handshake) bool) simLose {
		seen := 0
		return func(from string, _ int, hs *wire.Handshake) bool {
			if match(from, hs) && seen < n {
				seen++
				return true
			}
			return false
		}
	}
	for _, c := range []struct {
		name    string
		lose    simLose
		reorder bool
		rounds  int // the most it may take
	}{
		{"nothing lost", nil, false, 3},
		{"out of order", nil, true, 4},
		{"first 3 datagrams lost", func(_ string, k int, _ *wire.Handshake) bool { return k <= 3 }, false, 6},
		{"initiator's waves lost", firstN(3, isType("a", wire.HSWaveAHand, false)), false, 5},
		{"responder's waves lost", firstN(3, isType("b", wire.HSWaveAHand, false)), false, 5},
		{"responder's empty conclusions lost", firstN(3, isType("b", wire.HSConclusion, false)), false, 5},
		{"HSREQ lost", firstN(2, isType("a", wire.HSConclusion, true)), false, 6},
		{"HSRSP lost", firstN(2, isType("b", wire.HSConclusion, true)), false, 6},
		{"agreement lost", firstN(1, isType("a", wire.HSAgreement, false)), false, 5},
		{"every other datagram lost", func(_ string, k int, _ *wire.Handshake) bool { return k%2 == 0 }, true, 12},
	} {
		for _, pass := range []string{"", "state-machine-secret"} {
			cfgA := Config{Latency: 50 * time.Millisecond, Passphrase: pass, StreamID: "from-a", PBKeyLen: 16}
			cfgB := Config{Latency: 300 * time.Millisecond, Passphrase: pass, PBKeyLen: 32}
			a, b := newSimSide(t, "a", cfgA, 0x20000000), newSimSide(t, "b", cfgB, 0x10000000)
			simRendezvous(t, a, b, c.lose, c.reorder, c.rounds)
			if !a.done || !b.done || a.err != nil || b.err != nil {
				t.Errorf("%s, passphrase %q: a done %v err %v sent %v; b done %v err %v sent %v", c.name, pass,
					a.done, a.err, a.sent, b.done, b.err, b.sent)
				continue
			}
			if a.r.role != rdvInitiator || b.r.role != rdvResponder {
				t.Errorf("%s: roles %d %d", c.name, a.r.role, b.r.role)
			}
			// Each learnt the other's socket id and initial sequence number, and the other's latency
			// wish; the responder adopted the initiator's stream id.
			if a.r.peerID != b.r.id || b.r.peerID != a.r.id || a.r.peerHS.InitialSeq != b.r.req.InitialSeq ||
				b.r.peerHS.InitialSeq != a.r.req.InitialSeq {
				t.Errorf("%s: ids %#x/%#x isn %d/%d", c.name, a.r.peerID, b.r.peerID, a.r.peerHS.InitialSeq, b.r.peerHS.InitialSeq)
			}
			if a.r.peerHS.HS.RecvDelay != 300 || a.r.peerHS.HS.SendDelay != 300 || b.r.rc.StreamID != "from-a" {
				t.Errorf("%s: HSRSP delays %d/%d, responder's stream id %q", c.name, a.r.peerHS.HS.RecvDelay,
					a.r.peerHS.HS.SendDelay, b.r.rc.StreamID)
			}
			if pass != "" {
				// The initiator's keys both ways, of the responder's advertised length.
				if a.r.seal == nil || a.r.open == nil || b.r.seal == nil || b.r.open == nil ||
					a.r.seal.KeyLen() != 32 || b.r.open.KeyLen() != 32 || b.r.seal.KeyLen() != 32 {
					t.Errorf("%s: keys %v %v %v %v", c.name, a.r.seal, a.r.open, b.r.seal, b.r.open)
				}
			} else if a.r.seal != nil || a.r.open != nil || b.r.seal != nil || b.r.open != nil {
				t.Errorf("%s: keys without a passphrase", c.name)
			}
		}
	}
}

// TestRendezvousRefusals: equal cookies, different passphrases and a passphrase on one side
// only refuse the connection on both sides, whichever side is the initiator, with the reason
// libsrt gives.
func TestRendezvousRefusals(t *testing.T) {
	for _, c := range []struct {
		name           string
		passA, passB   string
		cookieB        uint32
		want           Reject
		wantIs         error
		initiatorFails bool // the initiator learns it from the responder's rejection
	}{
		{"equal cookies", "", "", 0x20000000, RejectRdvCookie, nil, false},
		{"passphrases differ", "passphrase-one", "passphrase-two", 0x10000000, RejectBadSecret, ErrBadPassphrase, true},
		{"initiator only", "passphrase-one", "", 0x10000000, RejectUnsecure, ErrNoPassphrase, true},
		{"responder only", "", "passphrase-two", 0x10000000, RejectUnsecure, ErrNoPassphrase, true},
		{"responder only, roles swapped", "", "passphrase-two", 0x30000000, RejectUnsecure, ErrNoPassphrase, true},
	} {
		a := newSimSide(t, "a", Config{Passphrase: c.passA}, 0x20000000)
		b := newSimSide(t, "b", Config{Passphrase: c.passB}, c.cookieB)
		simRendezvous(t, a, b, nil, false, 4)
		for _, s := range []*simSide{a, b} {
			var re *RejectError
			if s.done || !errors.As(s.err, &re) || re.Reason != c.want || (c.wantIs != nil && !errors.Is(s.err, c.wantIs)) {
				t.Errorf("%s: side %s: done %v err %v, want rejection %v", c.name, s.name, s.done, s.err, c.want)
			}
		}
	}
}

// TestRendezvousIgnores: what does not come from the peer of the contest, or cannot be a
// step of the handshake, changes nothing.
func TestRendezvousIgnores(t *testing.T) {
	a := newSimSide(t, "a", Config{}, 0x20000000)
	hs := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: 0x200, Cookie: 0x10000000, InitialSeq: 5}
	feed := func(dest uint32, h wire.Handshake) (rdvAction, error) {
		return a.r.receive(hsDatagram{b: appendHandshakePacket(nil, dest, 1, &h), at: 1})
	}
	for i, h := range []wire.Handshake{
		{Version: 5, Type: wire.HSConclusion, SocketID: 0x200, Cookie: 0x10000000}, // a conclusion to socket 0
		{Version: 5, Type: wire.HSAgreement, SocketID: 0x200},                      // an agreement first
		{Version: 5, Type: wire.HSInduction, SocketID: 0x200},                      // a caller
		{Version: 5, Type: wire.HSWaveAHand, Cookie: 0x10000000},                   // no socket id
		{Version: 5, Type: wire.HSWaveAHand, SocketID: 0x200},                      // no cookie
		{Version: 5, Type: wire.HSDone, SocketID: 0x200},
		{Version: 5, Type: 77, SocketID: 0x200},
	} {
		if act, err := feed(0, h); act != rdvWait || err != nil || a.r.role != rdvDraw {
			t.Errorf("handshake %d: %v %v, role %d", i, act, err, a.r.role)
		}
	}
	if act, err := feed(0, hs); act != rdvSend || err != nil || a.r.role != rdvInitiator || a.r.state != rdvAttention {
		t.Fatalf("wave: %v %v role %d state %d", act, err, a.r.role, a.r.state)
	}
	sent := a.r.req
	for i, h := range []wire.Handshake{
		{Version: 5, Type: wire.HSWaveAHand, SocketID: 0x300, Cookie: 0x10000000},                        // another socket
		{Version: 5, Type: wire.HSConclusion, SocketID: 0x200, Cookie: 0x10000001},                       // another cookie
		{Version: 5, Type: wire.HSConclusion, SocketID: 0x300, Cookie: 0x10000000},                       // another socket
		{Version: 5, Type: wire.Rejection(10), SocketID: 0x300, Cookie: 0x10000000},                      // another socket's rejection
		{Version: 5, Type: wire.HSAgreement, SocketID: 0x200, Cookie: 0x10000000},                        // an agreement to the initiator
		{Version: 5, Type: wire.HSConclusion, SocketID: 0x200, Cookie: 0x10000000, HSCmd: wire.ExtHSReq}, // HSREQ to the initiator
	} {
		act, err := feed(a.r.id, h)
		if err != nil || a.r.state != rdvAttention || act == rdvDone || act == rdvSendDone {
			t.Errorf("handshake %d after the contest: %v %v state %d", i, act, err, a.r.state)
		}
	}
	if a.r.req.Type != sent.Type || a.r.req.HSCmd != wire.ExtHSReq || a.r.peerID != 0x200 {
		t.Errorf("the conclusion changed: %+v", a.r.req)
	}
	// An HSv4 peer.
	b := newSimSide(t, "b", Config{}, 0x20000000)
	if _, err := b.r.receive(hsDatagram{b: appendHandshakePacket(nil, 0, 1, &wire.Handshake{Version: 4, Type: wire.HSWaveAHand, SocketID: 9})}); !errors.Is(err, ErrVersion) {
		t.Errorf("HSv4 wave: %v", err)
	}
}

// splitmix returns a deterministic pseudo-random sequence (SplitMix64) seeded with seed.
func splitmix(seed uint64) func() uint64 {
	return func() uint64 {
		seed += 0x9E3779B97F4A7C15
		z := seed
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		return z ^ z>>31
	}
}
