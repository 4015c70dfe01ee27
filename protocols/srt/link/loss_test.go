package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Under loss: a relay drops 5 % of the datagrams in each direction and reorders 2 %; a 30 s
// stream at 3 Mbit/s with latency 200 ms must arrive whole, every payload by content and in
// order. The three pairings run in parallel.

const (
	lossDuration = 30 * time.Second
	lossRate     = 3_000_000 // bits per second
	lossShare    = 0.05
	reorderShare = 0.02
)

// lossPayloads returns the messages of a lossDuration stream at lossRate: each starts with its
// index, the rest pseudo-random.
func lossPayloads() [][]byte {
	n := int(lossDuration/time.Second) * lossRate / 8 / DefaultPayloadSize
	out := make([][]byte, n)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range out {
		p := make([]byte, DefaultPayloadSize)
		for j := 8; j < len(p); j++ {
			p[j] = byte(rng.Uint32())
		}
		binary.BigEndian.PutUint64(p, uint64(i))
		out[i] = p
	}
	return out
}

func TestUnderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("30 s streams")
	}
	msgs := lossPayloads()
	t.Run("ours-to-ours", func(t *testing.T) {
		t.Parallel()
		lossOursToOurs(t, msgs)
	})
	t.Run("libsrt-to-ours", func(t *testing.T) {
		t.Parallel()
		lossLibsrtToOurs(t, msgs)
	})
	t.Run("ours-to-libsrt", func(t *testing.T) {
		t.Parallel()
		lossOursToLibsrt(t, msgs)
	})
}

func lossOursToOurs(t *testing.T, msgs [][]byte) {
	cfg := Config{Latency: 200 * time.Millisecond}
	ln, err := Listen("127.0.0.1:0", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	relay := newLossyRelay(t, ln.Addr().String(), lossShare, reorderShare)
	ctx, cancel := context.WithTimeout(context.Background(), lossDuration+30*time.Second)
	defer cancel()
	c, err := dialRetry(ctx, relay.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, _, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	go func() {
		_ = pace(ctx, msgs, lossRate, func(b []byte) error { _, err := c.Write(b); return err })
	}()
	got, err := readAll(ctx, rc, len(msgs)*DefaultPayloadSize)
	if err != nil {
		t.Fatalf("after %d of %d messages: %v", len(got), len(msgs), err)
	}
	sameMessages(t, got, msgs)
	st, rst := c.Stats(), rc.Stats()
	t.Logf("relay dropped %d reordered %d; sender %+v; receiver %+v", relay.dropped.Load(), relay.reordered.Load(), st, rst)
	if st.PktRetrans == 0 || rst.PktRecvLoss == 0 || rst.PktRecvDrop != 0 {
		t.Errorf("retransmitted %d, receiver lost %d dropped %d", st.PktRetrans, rst.PktRecvLoss, rst.PktRecvDrop)
	}
}

func lossLibsrtToOurs(t *testing.T, msgs [][]byte) {
	ln, err := Listen("127.0.0.1:0", Config{Latency: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	relay := newLossyRelay(t, ln.Addr().String(), lossShare, reorderShare)
	in := udpPort(t)
	startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?latency=200", relay.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), lossDuration+30*time.Second)
	defer cancel()
	c, _, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(300 * time.Millisecond)
	go feedUDP(ctx, t, loopback(in), msgs, lossRate)
	got, err := readAll(ctx, c, len(msgs)*DefaultPayloadSize)
	if err != nil {
		t.Fatalf("after %d of %d messages: %v", len(got), len(msgs), err)
	}
	sameMessages(t, got, msgs)
	st := c.Stats()
	t.Logf("relay dropped %d reordered %d; receiver %+v", relay.dropped.Load(), relay.reordered.Load(), st)
	if st.PktRecvRetrans == 0 || st.PktRecvDrop != 0 {
		t.Errorf("retransmissions received %d, dropped %d", st.PktRecvRetrans, st.PktRecvDrop)
	}
}

func lossOursToLibsrt(t *testing.T, msgs [][]byte) {
	port := udpPort(t)
	s := startSLT(t, fmt.Sprintf("srt://%s?mode=listener&latency=200", loopback(port)), "file://con")
	relay := newLossyRelay(t, loopback(port), lossShare, reorderShare)
	ctx, cancel := context.WithTimeout(context.Background(), lossDuration+30*time.Second)
	defer cancel()
	c, err := dialRetry(ctx, relay.Addr(), Config{Latency: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := pace(ctx, msgs, lossRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
		t.Fatal(err)
	}
	all := bytes.Join(msgs, nil)
	checkSLTOutput(t, s, c, all)
	st := c.Stats()
	t.Logf("relay dropped %d reordered %d; sender %+v", relay.dropped.Load(), relay.reordered.Load(), st)
	if st.PktRetrans == 0 || st.PktSendDrop != 0 {
		t.Errorf("retransmitted %d, dropped %d", st.PktRetrans, st.PktSendDrop)
	}
}

// dialRetry dials until the handshake gets through (the relay may lose every try of one
// attempt, and srt-live-transmit may not listen yet).
func dialRetry(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	for {
		c, err := Dial(ctx, addr, cfg)
		if err == nil || ctx.Err() != nil {
			return c, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
