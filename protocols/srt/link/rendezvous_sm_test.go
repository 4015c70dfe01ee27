package link

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

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
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		a, b := rng.Uint32()|1, rng.Uint32()|1
		if rng.IntN(4) == 0 {
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
