//go:build linux

package link

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// gatedTransport is a UDP transport whose read loop the test can hold between two reads, as
// a stalled process would: what arrives meanwhile waits in the socket.
type gatedTransport struct {
	transport
	mu      sync.Mutex
	paused  bool
	blocked chan struct{} // a token each time the read loop stops at the gate
	resume  chan struct{}
	once    sync.Once
}

func (g *gatedTransport) readBatch(ps []*packet) (int, error) {
	g.mu.Lock()
	paused := g.paused
	g.mu.Unlock()
	if paused {
		g.blocked <- struct{}{}
		<-g.resume
	}
	return g.transport.readBatch(ps)
}

func (g *gatedTransport) pause() {
	g.mu.Lock()
	g.paused = true
	g.mu.Unlock()
}

func (g *gatedTransport) open() {
	g.mu.Lock()
	g.paused = false
	g.mu.Unlock()
	g.once.Do(func() { close(g.resume) })
}

// loopbackTransport returns the socket loops (recvmmsg, sendmmsg) over a loopbackUDP socket.
func loopbackTransport(t *testing.T) *udpTransport {
	t.Helper()
	tr, err := newUDPTransport(loopbackUDP(t))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTooLateWaitsForStalledReadLoop: a packet is lost, its retransmission arrives in time
// but the process is stalled and its read loop has not read it yet when the packet after it
// is due. Read must not give the lost packet up while the socket still holds what may be it:
// it waits for the read loop to catch up, then delivers both. (Before, Read dropped it as too
// late and returned the next one.)
func TestTooLateWaitsForStalledReadLoop(t *testing.T) {
	rc, err := Config{Latency: 20 * time.Millisecond, Log: discardLog()}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedTransport{transport: loopbackTransport(t), blocked: make(chan struct{}, 1), resume: make(chan struct{})}
	l := newListener(g, rc, nil)
	l.m.start()
	t.Cleanup(func() { _ = l.Close() })
	t.Cleanup(g.open) // runs first: a held read loop would keep Close waiting

	r := newRawPeer(t, l.Addr().String())
	hs := r.conclusion(r.induction())
	hs.HS.SendDelay = 20 // the latency of what it sends, ms
	r.send(r.handshake(0, &hs))
	if _, rsp, ok := r.recvHandshake(2 * time.Second); !ok || rsp.Type != wire.HSConclusion {
		t.Fatalf("conclusion answer %+v ok=%v", rsp, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data := func(seq uint32, rexmit bool) []byte {
		// Timestamp 100 µs, the handshake's: every packet is due 20 ms after the handshake.
		return wire.AppendData(nil, &wire.Data{Seq: seq, Position: wire.PosSolo, InOrder: true, MsgNo: seq, Timestamp: 100,
			DestSocket: c.id, Retransmitted: rexmit, Payload: []byte{byte(seq - 1000)}})
	}
	buf := make([]byte, 100)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r.send(data(1000, false))
	if n, err := c.Read(buf); err != nil || n != 1 || buf[0] != 0 {
		t.Fatalf("first read: %v %v", buf[:n], err)
	}

	// 1001 is lost; 1002 wakes the read loop, which then stalls before its next read.
	g.pause()
	r.send(data(1002, false))
	select {
	case <-g.blocked:
	case <-ctx.Done():
		t.Fatal("the read loop did not come back for its next read")
	}
	r.send(data(1001, true)) // the retransmission, in time, waits in the socket
	time.Sleep(100 * time.Millisecond)

	type result struct {
		b   byte
		err error
	}
	got := make(chan result, 2)
	go func() {
		for range 2 {
			n, err := c.Read(buf)
			if err != nil || n != 1 {
				got <- result{0xFF, err}
				return
			}
			got <- result{buf[0], nil}
		}
	}()
	// Wait until Read either returned or waits for the read loop; then let the loop run.
	for waiting := false; !waiting; {
		select {
		case res := <-got:
			g.open()
			t.Fatalf("while the read loop was stalled Read returned payload %d (%v); %d dropped as too late",
				res.b, res.err, c.Stats().PktRecvDrop)
		case <-time.After(time.Millisecond):
		}
		c.mu.Lock()
		waiting = c.rdWaiting
		c.mu.Unlock()
	}
	g.open()
	for want := byte(1); want <= 2; want++ {
		select {
		case res := <-got:
			if res.err != nil || res.b != want {
				t.Fatalf("read payload %d (%v), want %d", res.b, res.err, want)
			}
		case <-ctx.Done():
			t.Fatalf("Read did not return payload %d once the read loop ran", want)
		}
	}
	if st := c.Stats(); st.PktRecvDrop != 0 {
		t.Fatalf("%d dropped as too late", st.PktRecvDrop)
	}
}

// TestLaggingSeesQueuedDatagram: the reader reports lagging while it is busy, and while it
// waits for data but a datagram came that it has not read (the process was not scheduled);
// not once it found the socket empty and nothing came since.
func TestLaggingSeesQueuedDatagram(t *testing.T) {
	pc := loopbackUDP(t)
	br, err := newBatchReader(pc)
	if err != nil {
		t.Fatal(err)
	}
	idle := make(chan struct{}, 1)
	hold := make(chan struct{})
	br.setIdleHook(func() {
		idle <- struct{}{}
		<-hold // the read loop is not scheduled again yet
	})
	if !br.lagging() {
		t.Fatal("a reader that has not yet found the socket empty counts as caught up")
	}
	ps := []*packet{new(packet)}
	done := make(chan error, 1)
	go func() {
		_, err := br.read(ps)
		done <- err
	}()
	<-idle
	if br.lagging() {
		t.Fatal("lagging with the socket empty and the read loop waiting")
	}
	w, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("queued")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !br.lagging() {
		if time.Now().After(deadline) {
			t.Fatal("not lagging with a datagram in the socket that the read loop has not read")
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	if err := <-done; err != nil || ps[0].n != len("queued") {
		t.Fatalf("read %d bytes, %v", ps[0].n, err)
	}
	if !br.lagging() {
		t.Fatal("not lagging between a read and the next (what it read is not handled yet)")
	}
}
