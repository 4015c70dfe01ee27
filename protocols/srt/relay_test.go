package srt

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// sourceTS encodes secs seconds of the test source (a key frame a second) as MPEG-TS, once per
// test binary for each length.
func sourceTS(t *testing.T, secs int) []byte {
	t.Helper()
	return testutil.ReadClip(t, fmt.Sprintf("source-%ds.ts", secs), slices.Concat(sourceArgs, []string{"-t", fmt.Sprint(secs)})...)
}

// payloads cuts b into SRT payloads of 7 TS packets (the last may be shorter).
func payloads(b []byte) [][]byte { return slices.Collect(slices.Chunk(b, payloadSize)) }

// TestScanFindsKeyFrames: the scan's random access points are exactly the video key frames of
// the source (one a second), each a PES start on the video PID whose PES holds an IDR slice,
// and it keeps the PAT and PMT.
func TestScanFindsKeyFrames(t *testing.T) {
	clip := sourceTS(t, 4)
	_, units := demuxAll(t, clip)
	keys := 0
	for _, au := range units {
		if au.Track == 0 && au.Key {
			keys++
		}
	}
	var s tsScan
	raps := 0
	for _, p := range payloads(clip) {
		if i := s.payload(p); i >= 0 {
			raps++
			pkt := p[i*tsPacket:]
			if pid := uint16(pkt[1]&0x1f)<<8 | uint16(pkt[2]); pid != s.esPID || pkt[1]&0x40 == 0 {
				t.Fatalf("random access point on PID %d (video %d), PUSI %v", pid, s.esPID, pkt[1]&0x40 != 0)
			}
		}
	}
	if raps != keys || keys < 4 {
		t.Fatalf("%d random access points, %d key frames in the source", raps, keys)
	}
	if !s.psiOK || s.esType != streamTypeH264 {
		t.Fatalf("scan state: psi %v, stream type %#x", s.psiOK, s.esType)
	}
	psi := s.psi()
	if psi[0] != 0x47 || psi[1]&0x1f != 0 || psi[2] != 0 || uint16(psi[tsPacket+1]&0x1f)<<8|uint16(psi[tsPacket+2]) != s.pmtPID {
		t.Fatal("kept PSI is not the PAT followed by the PMT")
	}
}

// TestScanSurvivesGarbage: arbitrary bytes, truncated and lying sections never panic and never
// make a random access point without a PMT naming the PID.
func TestScanSurvivesGarbage(t *testing.T) {
	var s tsScan
	b := make([]byte, payloadSize)
	for i := range 2000 {
		for j := range b {
			b[j] = byte(i*31 + j*7 + j*j)
		}
		for k := 0; k < len(b); k += tsPacket {
			b[k] = 0x47
		}
		s.payload(b)
	}
	// A PAT whose section length runs past the packet is not taken.
	pat := make([]byte, tsPacket)
	copy(pat, []byte{0x47, 0x40, 0x00, 0x10, 0x00, 0x00, 0xb0, 0xff})
	s = tsScan{}
	s.payload(pat)
	if s.havePAT {
		t.Fatal("a PAT longer than its packet was taken")
	}
}

// TestRelayByteExact: a receiver of the server module gets the publisher's MPEG-TS byte for
// byte from a random access point on, starting with the PAT and PMT, however late it joins;
// after the publisher leaves and another comes, it resumes at the new publisher's first random
// access point.
func TestRelayByteExact(t *testing.T) {
	clip := sourceTS(t, 6)
	base := testutil.TakeBaseline()
	srv, _, stop := startServer(t, Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", portOf(srv.Addr()))
	dial := func(streamID string) *link.Conn { return dialSRT(t, addr, Options{StreamID: streamID}) }
	sendClip := func(pub *link.Conn, from, to int) {
		ps := payloads(clip)
		for _, p := range ps[from:min(to, len(ps))] {
			if _, err := pub.Write(p); err != nil {
				t.Fatalf("publish: %v", err)
			}
			time.Sleep(500 * time.Microsecond)
		}
	}
	n := len(payloads(clip))

	pub := dial("publisher/studio/cam1")
	sendClip(pub, 0, n/3)
	time.Sleep(500 * time.Millisecond) // past the latency: the server has the first third
	recv := dial("receiver/studio/cam1")
	got := make(chan []byte, 1)
	go func() { got <- readUntilQuiet(recv, 2*time.Second) }()
	time.Sleep(300 * time.Millisecond)
	sendClip(pub, n/3, n)
	time.Sleep(400 * time.Millisecond) // past the latency: what was sent is delivered
	_ = pub.Close()
	// It joined with the GOP the relay kept: from the last key frame of the first third.
	if off := checkRelayed(t, <-got, clip); off == 0 || off > n/3*payloadSize {
		t.Fatalf("first receiver started at byte %d, want the last key frame before %d", off, n/3*payloadSize)
	}

	// A new publisher: the receiver, still connected, resumes at its first key frame.
	testutil.Eventually(t, 10*time.Second, "the first publisher to leave", func() bool { return len(srv.ActiveStreams()) == 0 })
	pub2 := dial("publisher/studio/cam1")
	go func() { got <- readUntilQuiet(recv, 2*time.Second) }()
	sendClip(pub2, n/2+5, n)
	time.Sleep(400 * time.Millisecond)
	if off := checkRelayed(t, <-got, clip); off < (n/2+5)*payloadSize {
		t.Fatalf("after the new publisher the receiver resumed at byte %d, before that publisher's start %d", off, (n/2+5)*payloadSize)
	}
	if list := srv.ActiveStreams(); len(list) != 1 || list[0].Receivers != 1 || list[0].Readers != 1 {
		t.Fatalf("ActiveStreams %+v, want one stream with one receiver", list)
	}
	_ = recv.Close()
	waitReceivers(t, srv, 0, 10*time.Second, "the receiver to be gone")
	_ = pub2.Close()
	stopAndCheck(t, stop, base)
}

// readUntilQuiet reads c until nothing came for quiet (or the connection ends).
func readUntilQuiet(c *link.Conn, quiet time.Duration) []byte {
	var out bytes.Buffer
	buf := make([]byte, link.MaxPayloadSize)
	for {
		_ = c.SetReadDeadline(time.Now().Add(quiet))
		n, err := c.Read(buf)
		if err != nil { // quiet, or the connection ended: what came is the answer
			return out.Bytes()
		}
		out.Write(buf[:n])
	}
}

// checkRelayed fails unless got is the source's PAT and PMT followed by the source from one of
// its random access points on, byte for byte, to a whole packet; it returns that point's offset.
func checkRelayed(t *testing.T, got, clip []byte) int {
	t.Helper()
	if len(got) < 2*tsPacket+7*tsPacket {
		t.Fatalf("receiver got %d bytes", len(got))
	}
	var s tsScan
	var raps []int
	for i, p := range payloads(clip) {
		if k := s.payload(p); k >= 0 {
			raps = append(raps, i*payloadSize+k*tsPacket)
		}
	}
	// The PAT and PMT are the source's but for their continuity counters (the latest repeat).
	psi, head := s.psi(), bytes.Clone(got[:2*tsPacket])
	for _, i := range []int{3, tsPacket + 3} {
		head[i] = head[i]&0xf0 | psi[i]&0x0f
	}
	if !bytes.Equal(head, psi) {
		t.Fatal("the receiver's first two packets are not the PAT and PMT")
	}
	body := got[2*tsPacket:]
	for _, off := range raps {
		if bytes.HasPrefix(clip[off:], body[:tsPacket]) {
			if !bytes.Equal(body, clip[off:off+len(body)]) {
				t.Fatalf("relayed bytes differ from the source from the random access point at %d on", off)
			}
			t.Logf("receiver joined at byte %d of %d, got %d bytes, identical", off, len(clip), len(body))
			return off
		}
	}
	t.Fatal("the receiver did not start at a random access point of the source")
	return 0
}

// TestRelaySharesPayloads: 50 receivers join a stream whose relay keeps a GOP of about a
// second. Each receiver is sent the whole GOP and, with a receive buffer of 32 packets and a
// 10 s latency, holds most of it unacknowledged in the server's send buffer; yet the live
// payloads do not grow with the receivers: every connection queues the relay's own payloads,
// a header each. When the receivers and the publisher leave, every payload goes back.
func TestRelaySharesPayloads(t *testing.T) {
	const receivers = 50
	clip := sourceTS(t, 3)
	ps := payloads(clip)
	var s tsScan
	var raps []int
	for i, p := range ps {
		if s.payload(p) >= 0 {
			raps = append(raps, i)
		}
	}
	if len(raps) < 3 {
		t.Fatalf("%d random access points in the clip", len(raps))
	}
	upTo := raps[2]           // sent: everything before the third key frame, the GOP the second's
	gop := upTo - raps[1] + 1 // its payloads and the PAT and PMT
	start := link.Buffers()
	base := testutil.TakeBaseline()
	srv, _, stop := startServer(t, Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", portOf(srv.Addr()))
	dial := func(streamID string, latency time.Duration, rcvBuf int) *link.Conn {
		return dialSRT(t, addr, Options{StreamID: streamID, Latency: latency, RecvBuffer: rcvBuf})
	}
	pub := dial("publisher/studio/cam1", 0, 0)
	for _, p := range ps[:upTo] {
		if _, err := pub.Write(p); err != nil {
			t.Fatalf("publish: %v", err)
		}
		time.Sleep(200 * time.Microsecond)
	}
	// The publisher stays, idle: the relay keeps the GOP. Past the latency everything sent
	// reached the relay and was acknowledged.
	testutil.Eventually(t, 10*time.Second, "the publisher's payloads to be relayed", func() bool {
		st := pub.Stats()
		return st.PktSentUniq == uint64(upTo) && st.SendBufPkts == 0
	})
	time.Sleep(300 * time.Millisecond)
	kept := link.Buffers()

	conns := make([]*link.Conn, receivers)
	for i := range conns {
		conns[i] = dial("receiver/studio/cam1", 10*time.Second, 32*payloadSize)
	}
	waitReceivers(t, srv, receivers, 10*time.Second, "every receiver to join")
	// Each server connection sent the receiver's window and holds the rest of the GOP.
	held := gop - 32
	var joined link.BufferStats
	testutil.Eventually(t, 10*time.Second, "the GOP to be queued for every receiver", func() bool {
		joined = link.Buffers()
		return joined.Queued-kept.Queued >= int64(receivers*held*9/10)
	})
	payloads, queued := joined.Payloads-kept.Payloads, joined.Queued-kept.Queued
	t.Logf("GOP %d payloads; before the receivers %d payloads live; with %d receivers %d more payloads and %d more queued packets",
		gop, kept.Payloads-start.Payloads, receivers, payloads, queued)
	grown := joined.PayloadBytes + joined.QueuedBytes - kept.PayloadBytes - kept.QueuedBytes
	perPkt := int64(0)
	if queued > 0 {
		perPkt = grown / queued
	}
	t.Logf("payload and send-buffer bytes: %d more with %d receivers, %d per queued packet (a copy each would take %d more)",
		grown, receivers, perPkt, queued*(kept.PayloadBytes/max(kept.Payloads, 1)))
	if kept.Payloads-start.Payloads < int64(gop) {
		t.Fatalf("the relay keeps %d payloads, want the GOP's %d", kept.Payloads-start.Payloads, gop)
	}
	if payloads > 0 || perPkt > 64 {
		t.Fatalf("%d receivers added %d live payloads and %d bytes a queued packet, want no payload and a header's bytes (the relay's payloads shared)",
			receivers, payloads, perPkt)
	}

	for _, c := range conns {
		_ = c.Close()
	}
	waitReceivers(t, srv, 0, 10*time.Second, "the receivers to be gone")
	_ = pub.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "every payload and queued packet to be given back", func() bool {
		b := link.Buffers()
		return b.Payloads == start.Payloads && b.Queued == start.Queued
	})
	base.Check(t, 15*time.Second)
}
