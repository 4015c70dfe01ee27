package link

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// benchPair makes a listener on the in-memory transport with one accepted connection from
// peer, as after a handshake, without goroutines: the benchmark plays the read loop and the
// clock itself.
func benchPair(b *testing.B) (*Listener, *Conn, netip.AddrPort) {
	rc, err := Config{Latency: time.Millisecond, Log: discardLog()}.resolve()
	if err != nil {
		b.Fatal(err)
	}
	l := newListener(&memTransport{}, rc, nil)
	peer := netip.MustParseAddrPort("127.0.0.1:5000")
	r := &rawPeer{id: 77}
	now := l.m.now()
	hs := r.conclusion(l.cookie(peer, now/cookieBucket))
	p := new(packet)
	p.n = copy(p.buf[:], r.handshake(0, &hs))
	p.from = peer
	l.m.handle(p, now, newOutbox(readOutboxSize))
	c := <-l.accepts
	c.rcvLatency = 0
	return l, c, peer
}

// BenchmarkReceivePath is one data packet through the receive path: the read loop's
// demultiplexing into the receive buffer, the clock's ACKs, the ACKACKs they get, and Read
// copying the payload out. 0 allocs/op: the buffer a datagram is read into is the one Read
// empties, and it goes back to the pool.
func BenchmarkReceivePath(b *testing.B) {
	l, c, peer := benchPair(b)
	m := l.m
	out := newOutbox(readOutboxSize)
	payload := make([]byte, DefaultPayloadSize)
	buf := make([]byte, 2048)
	var ctl wire.Control
	seq := uint32(1000)
	b.ReportAllocs()
	b.SetBytes(DefaultPayloadSize)
	for b.Loop() {
		p := getPacket()
		now := m.now()
		d := wire.Data{Seq: seq, Position: wire.PosSolo, InOrder: true, MsgNo: 1, Timestamp: 0, DestSocket: c.id, Payload: payload}
		p.n = len(wire.AppendData(p.buf[:0], &d))
		p.from = peer
		if !m.handle(p, now, out) {
			b.Fatal("packet not kept")
		}
		seq = wire.SeqAdd(seq, 1)
		if seq%16 == 0 {
			// The clock's turn: an ACK, answered by the peer's ACKACK.
			out.reset()
			c.mu.Lock()
			c.rcv.nextACK = 0
			c.mu.Unlock()
			c.service(now, out)
			if c.rcv.ackNo != 0 {
				a := wire.AppendControlHeader(p.buf[:0], &wire.Control{Type: wire.CtrlACKACK, Info: c.rcv.ackNo, DestSocket: c.id})
				ap := getPacket()
				ap.n = copy(ap.buf[:], wire.AppendEmptyCIF(a))
				ap.from = peer
				m.handle(ap, now, out)
				putPacket(ap)
			}
			out.reset()
		}
		n, err := c.Read(buf)
		if err != nil || n != DefaultPayloadSize {
			b.Fatalf("read %d %v", n, err)
		}
	}
	_ = ctl
}

// BenchmarkSendPath is one data packet through the send path: Write into the send buffer,
// the clock sending it into its outbox and flushing, and the peer's ACK releasing it (with
// our ACKACK). 0 allocs/op.
func BenchmarkSendPath(b *testing.B) {
	l, c, peer := benchPair(b)
	m := l.m
	c.cfg.MaxBW = -1
	out := newOutbox(readOutboxSize)
	payload := make([]byte, DefaultPayloadSize)
	ackp := new(packet)
	ackNo := uint32(0)
	b.ReportAllocs()
	b.SetBytes(DefaultPayloadSize)
	for b.Loop() {
		if _, err := c.Write(payload); err != nil {
			b.Fatal(err)
		}
		now := sendReady(m)
		c.mu.Lock()
		end := c.snd.sentEnd
		c.mu.Unlock()
		if end%8 == 0 {
			ackNo++
			h := wire.AppendControlHeader(ackp.buf[:0], &wire.Control{Type: wire.CtrlACK, Info: ackNo, DestSocket: c.id})
			ackp.n = len(wire.AppendACK(h, &wire.ACK{Kind: wire.ACKFull, LastACKSeq: end, AvailBuf: 8000}))
			ackp.from = peer
			out.reset()
			m.handle(ackp, now, out)
		}
	}
	if st := c.Stats(); st.PktSendDrop != 0 {
		b.Fatalf("dropped %d", st.PktSendDrop)
	}
}

// BenchmarkSendShared is one payload fanned out to 50 connections on one socket, as the
// server's relay does: NewPayload, WriteShared on each connection, the clock sending the 50
// datagrams (header and shared payload each) in its batches, and the peers' ACKs releasing
// the references. 0 allocs/op: the payload and every send-buffer entry are reused.
func BenchmarkSendShared(b *testing.B) {
	const fan = 50
	l, conns, _ := memPair(b, fan, Config{Latency: time.Millisecond, MaxBW: -1})
	m := l.m
	out := newOutbox(readOutboxSize)
	msg := make([]byte, DefaultPayloadSize)
	ackp := new(packet)
	ackNo := uint32(0)
	b.ReportAllocs()
	b.SetBytes(DefaultPayloadSize * fan)
	for b.Loop() {
		pl := newPayload(msg)
		for _, c := range conns {
			if _, err := c.WriteShared(pl); err != nil {
				b.Fatal(err)
			}
		}
		pl.Release()
		now := sendReady(m)
		c0 := conns[0]
		c0.mu.Lock()
		end := c0.snd.sentEnd
		c0.mu.Unlock()
		if end%8 == 0 {
			ackNo++
			for _, c := range conns {
				c.mu.Lock()
				end := c.snd.sentEnd
				c.mu.Unlock()
				h := wire.AppendControlHeader(ackp.buf[:0], &wire.Control{Type: wire.CtrlACK, Info: ackNo, DestSocket: c.id})
				ackp.n = len(wire.AppendACK(h, &wire.ACK{Kind: wire.ACKFull, LastACKSeq: end, AvailBuf: 8000}))
				ackp.from = c.peer
				m.handle(ackp, now, out)
				out.reset()
			}
		}
	}
	for _, c := range conns {
		if st := c.Stats(); st.PktSendDrop != 0 {
			b.Fatalf("dropped %d", st.PktSendDrop)
		}
	}
}

// BenchmarkLoopback streams messages from Write on a caller to Read on a listener over UDP on
// loopback, paced at 50 MB/s, with the real socket loops (recvmmsg, sendmmsg) and every ACK:
// allocations per message in the whole process.
func BenchmarkLoopback(b *testing.B) {
	ln := listen(b, Config{Latency: time.Millisecond, Log: discardLog()}, nil)
	c, s := dialAccepted(context.Background(), b, ln, Config{Latency: time.Millisecond, MaxBW: 50_000_000, Log: discardLog()})
	payload := make([]byte, DefaultPayloadSize)
	buf := make([]byte, 2048)
	// Warm the pools and buffers up.
	for range 1000 {
		_, _ = c.Write(payload)
		_, _ = s.Read(buf)
	}
	b.ReportAllocs()
	b.SetBytes(DefaultPayloadSize)
	b.ResetTimer()
	done := make(chan error, 1)
	go func() {
		for range b.N {
			if _, err := c.Write(payload); err != nil {
				done <- err
				return
			}
			for {
				c.mu.Lock()
				queued := c.snd.buf.n
				c.mu.Unlock()
				if queued < 512 {
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		done <- nil
	}()
	for range b.N {
		if _, err := s.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if st := s.Stats(); st.PktRecvDrop != 0 {
		b.Logf("receiver dropped %d", st.PktRecvDrop)
	}
}
