package link

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// mustPanic fails unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s did not panic", what)
		}
	}()
	f()
}

// TestPayloadReferences: a payload counts its references, is counted live until the last goes,
// refuses to be retained or released once it is gone, and refuses to be longer than a packet.
func TestPayloadReferences(t *testing.T) {
	if _, err := NewPayload(make([]byte, MaxPayloadSize+1)); !errors.Is(err, ErrMessageTooLong) {
		t.Fatalf("payload of %d bytes: %v, want ErrMessageTooLong", MaxPayloadSize+1, err)
	}
	before := Buffers().Payloads
	pl, err := NewPayload([]byte("shared"))
	if err != nil {
		t.Fatal(err)
	}
	if string(pl.Bytes()) != "shared" || pl.Len() != 6 || Buffers().Payloads != before+1 {
		t.Fatalf("payload %q of %d, %d live, want \"shared\", 6, %d", pl.Bytes(), pl.Len(), Buffers().Payloads, before+1)
	}
	pl.Retain()
	pl.Release()
	if n := pl.refs.Load(); n != 1 || Buffers().Payloads != before+1 {
		t.Fatalf("after retain and release: %d references, %d live", n, Buffers().Payloads)
	}
	pl.Release()
	if got := Buffers().Payloads; got != before {
		t.Fatalf("after the last release %d payloads live, want %d", got, before)
	}
	mustPanic(t, "a release past the last", pl.Release)
	pl.refs.Store(0)
	mustPanic(t, "a retain after the last release", pl.Retain)
}

// sharedDatagram checks that the i-th datagram of out is a data packet for c of sequence
// number seq made of two pieces, its header and pl's own bytes (not a copy), and returns the
// header.
func sharedDatagram(t *testing.T, out *outbox, i int, c *Conn, seq uint32, pl *Payload) wire.Data {
	t.Helper()
	bufs := out.msgs[i].Buffers
	if len(bufs) != 2 || len(bufs[0]) != wire.HeaderSize {
		t.Fatalf("datagram %d: %d pieces, the first of %d bytes; want a header and the payload", i, len(bufs), len(bufs[0]))
	}
	if &bufs[1][0] != &pl.b[0] || len(bufs[1]) != pl.n {
		t.Fatalf("datagram %d: the payload is not the shared one", i)
	}
	var d wire.Data
	if err := wire.ParseData(append(bytes.Clone(bufs[0]), bufs[1]...), &d); err != nil {
		t.Fatalf("datagram %d: %v", i, err)
	}
	if d.DestSocket != c.peerID || d.Seq != seq || string(d.Payload) != string(pl.Bytes()) {
		t.Fatalf("datagram %d: to %d, seq %d, %q; want to %d, seq %d, %q", i, d.DestSocket, d.Seq, d.Payload, c.peerID, seq, pl.Bytes())
	}
	return d
}

// TestWriteSharedNoCopy: one payload written to three connections is sent by each, first and
// again on a NAK, as its own header and the one shared payload; each connection holds a
// reference until the packet is acknowledged, dropped as too late, or the connection closes,
// and a batch of datagrams holds one until it is sent.
func TestWriteSharedNoCopy(t *testing.T) {
	l, conns, tr := memPair(t, 3, Config{MaxBW: -1})
	m := l.m
	before := Buffers()
	pl, err := NewPayload([]byte("one payload, three connections"))
	if err != nil {
		t.Fatal(err)
	}
	seqs := make([]uint32, len(conns))
	for i, c := range conns {
		c.mu.Lock()
		seqs[i] = c.snd.buf.end()
		c.mu.Unlock()
		if n, err := c.WriteShared(pl); err != nil || n != pl.Len() {
			t.Fatalf("WriteShared: %d, %v", n, err)
		}
	}
	pl.Release() // the writer's own
	refs := func(want int32, when string) {
		t.Helper()
		if n := pl.refs.Load(); n != want {
			t.Fatalf("%s: %d references, want %d", when, n, want)
		}
	}
	refs(3, "queued on three connections")
	if b := Buffers(); b.Payloads != before.Payloads+1 || b.Queued != before.Queued+3 {
		t.Fatalf("queued: %d payloads and %d queued packets live, want %d and %d", b.Payloads, b.Queued, before.Payloads+1, before.Queued+3)
	}

	out := newOutbox(readOutboxSize)
	now := m.now()
	for _, c := range conns {
		c.service(now, out)
	}
	if out.n != 3 {
		t.Fatalf("%d datagrams sent, want 3", out.n)
	}
	for i, c := range conns {
		if d := sharedDatagram(t, out, i, c, seqs[i], pl); d.Retransmitted {
			t.Fatalf("datagram %d: first sending marked retransmitted", i)
		}
	}
	refs(6, "in the send buffers and a batch not sent yet")
	if err := out.flush(tr); err != nil {
		t.Fatal(err)
	}
	refs(3, "sent")

	// A NAK from the first connection's peer: the retransmission is the same payload, with
	// the R flag set in the datagram's header only.
	c0 := conns[0]
	h := wire.AppendControlHeader(nil, &wire.Control{Type: wire.CtrlNAK, DestSocket: c0.id})
	nak := new(packet)
	nak.n = copy(nak.buf[:], wire.AppendNAKRange(h, seqs[0], seqs[0]))
	nak.from = c0.peer
	m.handle(nak, now, newOutbox(8))
	c0.service(now, out)
	if out.n != 1 {
		t.Fatalf("%d datagrams after a NAK, want 1", out.n)
	}
	if d := sharedDatagram(t, out, 0, c0, seqs[0], pl); !d.Retransmitted {
		t.Fatal("retransmission not marked")
	}
	c0.mu.Lock()
	kept := c0.snd.buf.front().hdr
	c0.mu.Unlock()
	if kept[4]&0x04 != 0 { // the R bit of the message-number word
		t.Fatal("the R flag was set in the header kept for the next sending")
	}
	refs(4, "retransmission in a batch")
	out.reset()
	refs(3, "batch given up")

	// Acknowledged on the first, too late on the second, closed on the third.
	h = wire.AppendControlHeader(nil, &wire.Control{Type: wire.CtrlACK, Info: 1, DestSocket: c0.id})
	ack := new(packet)
	ack.n = copy(ack.buf[:], wire.AppendACK(h, &wire.ACK{Kind: wire.ACKFull, LastACKSeq: wire.SeqAdd(seqs[0], 1), AvailBuf: 8000}))
	ack.from = c0.peer
	m.handle(ack, now, newOutbox(8))
	refs(2, "acknowledged by one")
	conns[1].service(now+conns[1].sndDropThreshold()+1000, out)
	out.reset()
	refs(1, "dropped by another")
	if err := conns[2].Close(); err != nil {
		t.Fatal(err)
	}
	if n := pl.refs.Load(); n != 0 {
		t.Fatalf("after every connection let it go: %d references", n)
	}
	if b := Buffers(); b.Payloads != before.Payloads || b.Queued != before.Queued {
		t.Fatalf("at the end %d payloads and %d queued packets live, want %d and %d", b.Payloads, b.Queued, before.Payloads, before.Queued)
	}
}

// TestWriteSharedEncrypted: an encrypting connection sends a shared payload from a copy of
// its own, encrypted with its key; the shared bytes stay plain and the reader gets them.
func TestWriteSharedEncrypted(t *testing.T) {
	ln := listen(t, Config{Passphrase: testPassphrase}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, s := dialAccepted(ctx, t, ln, Config{Passphrase: testPassphrase, Log: discardLog()})
	const msg = "plain for everyone, encrypted on the wire"
	pl, err := NewPayload([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Release()
	for range 3 {
		if _, err := s.WriteShared(pl); err != nil {
			t.Fatal(err)
		}
		if n := pl.refs.Load(); n != 1 || string(pl.Bytes()) != msg {
			t.Fatalf("after WriteShared on an encrypting connection: %d references, %q", n, pl.Bytes())
		}
	}
	buf := make([]byte, MaxPayloadSize)
	for i := range 3 {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("read %d: %q, %v", i, buf[:n], err)
		}
	}
	if st := c.Stats(); st.PktRecvUndecrypt != 0 {
		t.Fatalf("%d undecryptable", st.PktRecvUndecrypt)
	}
}
