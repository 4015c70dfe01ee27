package link

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// Interoperability with libsrt 1.5.1 (srt-live-transmit), in the four roles, content checked
// byte for byte.

const interopRate = 8_000_000 // bits per second the test feeds

// TestInteropLibsrtCallerSends: libsrt caller → our listener, with a stream id.
func TestInteropLibsrtCallerSends(t *testing.T) { interopCallerSendsKL(t, "", 0) }

func interopCallerSendsKL(t *testing.T, passphrase string, keyLen int) {
	clip := chunks(testClip(t))
	sids := make(chan string, 1)
	ln, err := Listen("127.0.0.1:0", Config{Latency: 200 * time.Millisecond, Passphrase: passphrase}, func(r *Request) Reject {
		select {
		case sids <- r.StreamID():
		default:
		}
		return RejectNone
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	in := udpPort(t)
	url := fmt.Sprintf("srt://%s?streamid=publish/live/cam1&latency=200%s", ln.Addr(), kmQuery(passphrase, keyLen))
	startSLT(t, "udp://"+loopback(in), url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, req := accept(ctx, t, ln)
	if sid := <-sids; sid != "publish/live/cam1" || req.StreamID() != sid || c.StreamID() != sid {
		t.Errorf("stream id %q / %q", sid, req.StreamID())
	}
	if c.Latency() != 200*time.Millisecond || req.Encrypted() != (passphrase != "") {
		t.Errorf("latency %v encrypted %v", c.Latency(), req.Encrypted())
	}
	relayClip(ctx, t, c, in, clip, 200*time.Millisecond, "libsrt caller to ours")
	if st := c.Stats(); st.PktRecvUniq != uint64(len(clip)) || st.RTT <= 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestInteropLibsrtListenerSends: libsrt listener → our caller.
func TestInteropLibsrtListenerSends(t *testing.T) { interopListenerSends(t, "", 0) }

func interopListenerSends(t *testing.T, passphrase string, keyLen int) {
	clip := chunks(testClip(t))
	in, port := udpPort(t), udpPort(t)
	startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=listener&latency=200%s", loopback(port), kmQuery(passphrase, keyLen)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, loopback(port), Config{Latency: 120 * time.Millisecond, Passphrase: passphrase, PBKeyLen: keyLen})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Latency() != 200*time.Millisecond {
		t.Errorf("negotiated latency %v, want the listener's 200 ms", c.Latency())
	}
	relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt listener to ours")
}

// TestInteropLibsrtCallerReads: our listener → libsrt caller.
func TestInteropLibsrtCallerReads(t *testing.T) { interopCallerReads(t, "", 0) }

func interopCallerReads(t *testing.T, passphrase string, keyLen int) {
	clip := chunks(testClip(t))
	all := bytes.Join(clip, nil)
	ln, err := Listen("127.0.0.1:0", Config{Latency: 200 * time.Millisecond, Passphrase: passphrase}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := startSLT(t, fmt.Sprintf("srt://%s?streamid=#!::r=live/cam1,m=request%s", ln.Addr(), kmQuery(passphrase, keyLen)), "file://con")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, req := accept(ctx, t, ln)
	if req.StreamID() != "#!::r=live/cam1,m=request" {
		t.Errorf("stream id %q", req.StreamID())
	}
	if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
		t.Fatal(err)
	}
	checkSLTOutput(t, s, c, all)
}

// TestInteropLibsrtListenerReads: our caller → libsrt listener.
func TestInteropLibsrtListenerReads(t *testing.T) { interopListenerReads(t, "", 0) }

func interopListenerReads(t *testing.T, passphrase string, keyLen int) {
	clip := chunks(testClip(t))
	all := bytes.Join(clip, nil)
	port := udpPort(t)
	s := startSLT(t, fmt.Sprintf("srt://%s?mode=listener%s", loopback(port), kmQuery(passphrase, 0)), "file://con")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, loopback(port), Config{Latency: 200 * time.Millisecond, Passphrase: passphrase, PBKeyLen: keyLen, StreamID: "sluice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
		t.Fatal(err)
	}
	checkSLTOutput(t, s, c, all)
	st := c.Stats()
	if st.PktSentUniq != uint64(len(clip)) || st.RTT <= 0 {
		t.Errorf("stats %+v", st)
	}
	c.Close()
}

// kmQuery returns the srt-live-transmit query options for a passphrase.
func kmQuery(passphrase string, keyLen int) string {
	q := ""
	if passphrase != "" {
		q += "&passphrase=" + passphrase
	}
	if keyLen != 0 {
		q += fmt.Sprintf("&pbkeylen=%d", keyLen)
	}
	return q
}

// checkSLTOutput waits for srt-live-transmit to have written all but its stdio buffer (4 KiB),
// closes our side (which waits for the acknowledgements), stops it so that it flushes, and
// compares.
func checkSLTOutput(t *testing.T, s *slt, c *Conn, all []byte) {
	t.Helper()
	waitBytes(t, s, len(all)-8192, 10*time.Second)
	// Once everything is acknowledged, libsrt still holds the last packets for the latency
	// before it writes them out; a shutdown before that would discard them.
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().SendBufPkts > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(c.PeerLatency() + 300*time.Millisecond)
	if t.Failed() || !bytes.Equal(s.stdout(), all[:len(s.stdout())]) {
		dumpConn(t, "sender", c)
	}
	c.Close()
	s.stop()
	if got := s.stdout(); !bytes.Equal(got, all) {
		t.Fatalf("libsrt received %d bytes, want %d (equal prefix: %v)", len(got), len(all), bytes.HasPrefix(all, got))
	}
}
