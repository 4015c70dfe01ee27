package link

import (
	"context"
	"errors"
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
