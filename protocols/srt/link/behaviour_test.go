package link

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// memPair is a listener on the in-memory transport with n accepted connections, driven by
// the test (no goroutines): for checks of what one clock round sends.
func memPair(t testing.TB, n int, cfg Config) (*Listener, []*Conn, *memTransport) {
	t.Helper()
	cfg.Log = discardLog()
	rc, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	tr := &memTransport{}
	l := newListener(tr, rc, nil)
	now := l.m.now()
	var conns []*Conn
	for i := range n {
		peer := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(5000+i))
		r := &rawPeer{id: uint32(100 + i)}
		hs := r.conclusion(l.cookie(peer, now/cookieBucket))
		p := new(packet)
		p.n = copy(p.buf[:], r.handshake(0, &hs))
		p.from = peer
		l.m.handle(p, now, newOutbox(readOutboxSize))
		conns = append(conns, <-l.accepts)
	}
	return l, conns, tr
}

// TestFanOutOneSendmmsg: packets that many connections on one socket write at the same
// moment leave in one batch.
func TestFanOutOneSendmmsg(t *testing.T) {
	l, conns, tr := memPair(t, 20, Config{MaxBW: -1})
	for _, c := range conns {
		if _, err := c.Write([]byte("fan-out")); err != nil {
			t.Fatal(err)
		}
	}
	tr.written.Store(0)
	batches := tr.batches.Load()
	m := l.m
	sendReady(m)
	if got := tr.written.Load(); got != int64(len(conns)) {
		t.Fatalf("%d datagrams sent, want %d", got, len(conns))
	}
	if got := tr.batches.Load() - batches; got != 1 {
		t.Fatalf("%d sendmmsg calls for %d connections, want 1", got, len(conns))
	}
}

// TestDropRequestHonoured: after a drop request the receiver reports no loss for those
// packets, acknowledges past them, and Read skips them.
func TestDropRequestHonoured(t *testing.T) {
	l, conns, _ := memPair(t, 1, Config{Latency: time.Millisecond})
	c := conns[0]
	m := l.m
	out := newOutbox(readOutboxSize)
	isn := c.rcv.buf.start
	send := func(p []byte) {
		pk := new(packet)
		pk.n = copy(pk.buf[:], p)
		pk.from = c.peer
		m.handle(pk, m.now(), out)
	}
	data := func(off int32) []byte {
		return wire.AppendData(nil, &wire.Data{Seq: wire.SeqAdd(isn, off), Position: wire.PosSolo, MsgNo: 1, DestSocket: c.id,
			Payload: []byte{byte(off)}})
	}
	send(data(0))
	send(data(3)) // 1 and 2 lost
	c.mu.Lock()
	lost := c.rcv.loss.len()
	c.mu.Unlock()
	if lost != 2 {
		t.Fatalf("%d lost, want 2", lost)
	}
	h := wire.AppendControlHeader(nil, &wire.Control{Type: wire.CtrlDropReq, DestSocket: c.id})
	send(wire.AppendDropReq(h, &wire.DropReq{First: wire.SeqAdd(isn, 1), Last: wire.SeqAdd(isn, 2)}))
	c.mu.Lock()
	lost, ack := c.rcv.loss.len(), c.rcv.ackSeq()
	c.mu.Unlock()
	if lost != 0 || ack != wire.SeqAdd(isn, 4) {
		t.Fatalf("after the drop request: %d lost, ACK %d, want 0 and %d", lost, ack, wire.SeqAdd(isn, 4))
	}
	buf := make([]byte, 10)
	for _, want := range []byte{0, 3} {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(buf)
		if err != nil || n != 1 || buf[0] != want {
			t.Fatalf("read %v %v, want payload %d", buf[:n], err, want)
		}
	}
	if st := c.Stats(); st.PktRecvDrop != 2 {
		t.Errorf("dropped %d, want 2", st.PktRecvDrop)
	}
}

// TestSenderDropsTooLate: packets unacknowledged past the drop threshold (the larger of the
// peer's latency and 1 s, plus 20 ms) are given up and the peer is told with a drop request.
func TestSenderDropsTooLate(t *testing.T) {
	l, conns, _ := memPair(t, 1, Config{MaxBW: -1})
	c := conns[0]
	m := l.m
	for range 10 {
		if _, err := c.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
	}
	out := newOutbox(readOutboxSize)
	now := m.now()
	c.service(now, out) // sends them
	out.reset()
	c.service(now+c.sndDropThreshold()+1000, out)
	var found bool
	for i := range out.n {
		var ctl wire.Control
		var d wire.DropReq
		b := out.msgs[i].Buffers[0]
		if wire.ParseControl(b, &ctl) == nil && ctl.Type == wire.CtrlDropReq && wire.ParseDropReq(ctl.CIF, &d) == nil {
			found = wire.SeqDiff(d.Last, d.First) == 9
		}
	}
	if st := c.Stats(); st.PktSendDrop != 10 || st.SendBufPkts != 0 || !found {
		t.Fatalf("dropped %d, buffer %d, drop request for the 10: %v", st.PktSendDrop, st.SendBufPkts, found)
	}
}

// TestSlowReaderDoesNotBlock: a connection whose consumer stops reading fills its buffer up to
// its cap and drops what comes after (counted); another connection on the same socket goes on.
func TestSlowReaderDoesNotBlock(t *testing.T) {
	ln := listen(t, Config{Latency: 300 * time.Millisecond, RecvBuffer: 64 * DefaultPayloadSize}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var senders, receivers []*Conn
	for range 2 {
		c, err := Dial(ctx, ln.Addr().String(), Config{Latency: 300 * time.Millisecond, MaxBW: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, _ := accept(ctx, t, ln)
		senders, receivers = append(senders, c), append(receivers, s)
	}
	msg := make([]byte, DefaultPayloadSize)
	var wg sync.WaitGroup
	var got int
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		_ = receivers[1].SetReadDeadline(time.Now().Add(10 * time.Second))
		for got < 1000 {
			if _, err := receivers[1].Read(buf); err != nil {
				t.Errorf("after %d: %v", got, err)
				dumpConn(t, "sender", senders[1])
				dumpConn(t, "receiver", receivers[1])
				return
			}
			got++
		}
	}()
	for i := range 1000 {
		binary.BigEndian.PutUint32(msg, uint32(i))
		for _, c := range senders {
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 9 {
			time.Sleep(time.Millisecond)
		}
	}
	wg.Wait()
	// The stalled connection's buffer is at its cap; its (conforming) sender, told so by the
	// ACKs, holds back the rest.
	st := receivers[0].Stats()
	if got != 1000 || st.RecvBufPkts != 64 || st.FlowWindow == 0 {
		t.Fatalf("reading connection got %d of 1000; stalled one holds %d packets", got, st.RecvBufPkts)
	}
}

// TestReceiveOverflowCounted: what a sender pushes past a full receive buffer (ignoring the
// flow window) is refused and counted, not stored.
func TestReceiveOverflowCounted(t *testing.T) {
	l, conns, _ := memPair(t, 1, Config{RecvBuffer: 64 * DefaultPayloadSize})
	c := conns[0]
	out := newOutbox(readOutboxSize)
	isn := c.rcv.buf.start
	for i := range 200 {
		pk := new(packet)
		pk.n = len(wire.AppendData(pk.buf[:0], &wire.Data{Seq: wire.SeqAdd(isn, int32(i)), Position: wire.PosSolo, MsgNo: 1,
			DestSocket: c.id, Payload: make([]byte, 100)}))
		pk.from = c.peer
		l.m.handle(pk, l.m.now(), out)
		out.reset()
	}
	if st := c.Stats(); st.RecvBufPkts != 64 || st.PktRecvOverflow != 136 || st.PktRecvDrop != 136 {
		t.Fatalf("held %d, refused %d (drops %d); want 64 and 136", st.RecvBufPkts, st.PktRecvOverflow, st.PktRecvDrop)
	}
}

// TestKeepAliveHoldsIdleConnection: with nothing to send, keep-alives hold the connection
// past the peer-idle timeout.
func TestKeepAliveHoldsIdleConnection(t *testing.T) {
	ln := listen(t, Config{PeerIdleTimeout: 2500 * time.Millisecond}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, s := dialAccepted(ctx, t, ln, Config{PeerIdleTimeout: 2500 * time.Millisecond})
	time.Sleep(4 * time.Second)
	if _, err := c.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	_ = s.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "still here" {
		t.Fatalf("after 4 s idle: %q %v", buf[:n], err)
	}
}

// TestMemoryPerConnection: 10 connections on one listener send 4 Mbit/s each, latency 200 ms,
// to srt-live-transmit readers; the heap they take, per connection, stays far under 1 MB (the
// send buffer holds only what is not acknowledged).
func TestMemoryPerConnection(t *testing.T) {
	const n = 10
	requireSLT(t)
	ln := listen(t, Config{Latency: 200 * time.Millisecond}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := heapInUse()
	var senders []*Conn
	for i := range n {
		startSLTQuiet(t, fmt.Sprintf("srt://%s?streamid=reader%d&latency=200", ln.Addr(), i), "file://con")
		s, _ := accept(ctx, t, ln)
		senders = append(senders, s)
	}
	msg := make([]byte, DefaultPayloadSize)
	stop := time.Now().Add(3 * time.Second)
	var peak uint64
	for i := 0; time.Now().Before(stop); i++ {
		for _, s := range senders {
			if _, err := s.Write(msg); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2600 * time.Microsecond) // 4 Mbit/s of 1316-byte payloads
		if i%200 == 199 {
			peak = max(peak, heapInUse())
		}
	}
	per := (int64(peak) - int64(before)) / n
	var unacked, sent uint64
	for _, s := range senders {
		st := s.Stats()
		unacked += uint64(st.SendBufPkts)
		sent += st.PktSent
	}
	t.Logf("heap per sending connection %d bytes; %d packets sent, %d unacknowledged at the end", per, sent, unacked)
	if per > 1<<20 || sent < n*500 {
		t.Errorf("heap per sending connection %d bytes (over 1 MB?), %d packets sent", per, sent)
	}
}

// TestTailLossRetransmitted: packets lost at the tail of a stream that then pauses show no
// gap to the receiver, so no loss report comes; the ACK timeout sends them again even to a
// peer that sends periodic NAK reports.
func TestTailLossRetransmitted(t *testing.T) {
	_, conns, _ := memPair(t, 1, Config{MaxBW: -1})
	c := conns[0]
	if !c.peerNAK {
		t.Fatal("the peer should send periodic NAK reports")
	}
	rexmits, _, _ := tailResent(t, c, func(now int64) int64 {
		return now + tailRexmitMin + c.rtt + 4*c.rttVar + ackInterval
	})
	if rexmits != 5 {
		t.Fatalf("%d of the 5 unacknowledged packets sent again", rexmits)
	}
}

// tailResent writes a tail of 5 packets on c and sends them, lost (no ACK comes); then it
// serves c at the time after(now) says and returns how many of the 5 it sent again, and the
// two times.
func tailResent(t *testing.T, c *Conn, after func(now int64) int64) (rexmits int, now, at int64) {
	t.Helper()
	for range 5 {
		if _, err := c.Write([]byte("tail")); err != nil {
			t.Fatal(err)
		}
	}
	out := newOutbox(readOutboxSize)
	now = c.m.now()
	c.service(now, out)
	out.reset()
	at = after(now)
	c.service(at, out)
	for i := range out.n {
		var d wire.Data
		if wire.ParseData(out.msgs[i].Buffers[0], &d) == nil && d.Retransmitted {
			rexmits++
		}
	}
	return rexmits, now, at
}

// TestLightACKShrinksWindow: what a light ACK acknowledges still fills the receiver's buffer
// until read, so it does not free room in the flow window; the next full ACK's free-buffer
// count does.
func TestLightACKShrinksWindow(t *testing.T) {
	l, conns, _ := memPair(t, 1, Config{MaxBW: -1})
	c := conns[0]
	m := l.m
	c.mu.Lock()
	c.snd.flowWindow = 64
	c.mu.Unlock()
	for range 100 {
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	out := newOutbox(256)
	now := m.now()
	c.service(now, out)
	inFlight := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return int(wire.SeqDiff(c.snd.sentEnd, c.snd.buf.start))
	}
	if n := inFlight(); n != 64 {
		t.Fatalf("%d in flight, want the window's 64", n)
	}
	ack := func(kind wire.ACKKind, seq uint32, avail uint32) {
		h := wire.AppendControlHeader(nil, &wire.Control{Type: wire.CtrlACK, Info: 1, DestSocket: c.id})
		pk := new(packet)
		pk.n = copy(pk.buf[:], wire.AppendACK(h, &wire.ACK{Kind: kind, LastACKSeq: seq, AvailBuf: avail}))
		pk.from = c.peer
		m.handle(pk, now, newOutbox(8))
	}
	c.mu.Lock()
	start := c.snd.buf.start
	c.mu.Unlock()
	ack(wire.ACKLight, wire.SeqAdd(start, 32), 0)
	out.reset()
	c.service(now, out)
	if n, sent := inFlight(), out.n; n != 32 || sent != 0 {
		t.Fatalf("after a light ACK of 32: %d in flight and %d more sent, want 32 and none", n, sent)
	}
	ack(wire.ACKFull, wire.SeqAdd(start, 32), 64)
	out.reset()
	c.service(now, out)
	if n := inFlight(); n != 64 {
		t.Fatalf("after a full ACK with room for 64: %d in flight", n)
	}
}

// TestDataDuringServiceKeepsACKTimer: a data packet that the read loop handles while the
// clock is serving the same connection (service has returned and computed its next time from
// a state without that packet) still gets its ACK on time: the clock must not leave the
// connection's timer at the later time it computed, which would hold the ACK (and the periodic
// NAK) until the next packet or the keep-alive a second later.
func TestDataDuringServiceKeepsACKTimer(t *testing.T) {
	l, conns, _ := memPair(t, 1, Config{})
	c := conns[0]
	m := l.m
	frozen := m.now()
	m.nowFunc = func() int64 { return frozen }
	isn := c.rcv.buf.start
	arrived := false
	m.served = func(sc *Conn) {
		if sc != c || arrived {
			return
		}
		arrived = true
		pk := new(packet)
		pk.n = copy(pk.buf[:], wire.AppendData(nil, &wire.Data{Seq: isn, Position: wire.PosSolo, MsgNo: 1,
			DestSocket: c.id, Payload: []byte("late")}))
		pk.from = c.peer
		if !m.handle(pk, m.now(), newOutbox(readOutboxSize)) {
			t.Error("the data packet was not kept")
		}
	}
	// Nothing to acknowledge yet: the service's next time is the keep-alive's, a second on.
	m.clk.markReady(c)
	m.sendMu.Lock()
	m.round(m.now())
	m.sendMu.Unlock()
	if !arrived {
		t.Fatal("the round did not serve the connection")
	}
	c.mu.Lock()
	nextACK := c.rcv.nextACK
	c.mu.Unlock()
	m.clk.mu.Lock()
	hidx, due := c.hidx, c.clkDue
	m.clk.mu.Unlock()
	if hidx < 0 || due > nextACK {
		t.Fatalf("clock due %d (heap index %d), want at most the ACK time %d (%d µs after now)",
			due, hidx, nextACK, nextACK-frozen)
	}
}
