package hostile

import (
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// The RTMP amplification attack (issue 13, item 1).
const (
	// rtmpAttackers is how many connections attack, spread over rtmpSources addresses: 75 an
	// address stays under the module's 100 per address, so only the memory rule holds them.
	rtmpAttackers = 300
	// rtmpDeclared is the message length each attacker declares: the largest the server takes
	// (maxMessageSize, 8 MiB).
	rtmpDeclared = 8 << 20
	// rtmpHold is how long the attackers stay silent before the case starts waiting for the
	// server to close them.
	rtmpHold = 3 * time.Second
	// rtmpSetupTimeout is the module's SetupTimeout (rtmp.DefaultSetupTimeout, 10 s): a
	// connection that neither publishes nor plays by then is closed.
	rtmpSetupTimeout = 10 * time.Second
)

// rtmpSources are the attackers' addresses.
var rtmpSources = []string{"127.0.1.1", "127.0.1.2", "127.0.1.3", "127.0.1.4"}

// rtmpAmplify opens one attacking connection from src: the handshake (C0, C1, then C2 echoing
// S1), Set Chunk Size 2^31-1, and a type 0 chunk header on chunk stream 3 declaring an 8 MiB
// video message, of which nothing follows.
func rtmpAmplify(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// C0 is the version (3); C1 is 4 bytes of time, 4 zero bytes and 1 528 random bytes.
	c0c1 := make([]byte, 1+1536)
	c0c1[0] = 3
	_, _ = rand.Read(c0c1[9:])
	if _, err := c.Write(c0c1); err != nil {
		c.Close()
		return nil, fmt.Errorf("C0C1: %w", err)
	}
	s := make([]byte, 1+1536+1536) // S0, S1, S2
	if _, err := io.ReadFull(c, s); err != nil {
		c.Close()
		return nil, fmt.Errorf("S0S1S2: %w", err)
	}
	msg := append([]byte(nil), s[1:1+1536]...) // C2 echoes S1
	// Set Chunk Size: chunk stream 2, type 0 header (timestamp 0, length 4, type 1, stream 0),
	// then the size with its top bit clear.
	msg = append(msg, 0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF)
	// A video message (type 9) of rtmpDeclared bytes on chunk stream 3, stream 1.
	n := uint32(rtmpDeclared)
	msg = append(msg, 0x03, 0, 0, 0, byte(n>>16), byte(n>>8), byte(n), 9, 1, 0, 0, 0)
	if _, err := c.Write(msg); err != nil {
		c.Close()
		return nil, fmt.Errorf("C2 and the headers: %w", err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// testRTMPAmplification: 300 connections to the RTMP server module from four addresses, each
// declaring an 8 MiB message after Set Chunk Size 2^31-1 and then silent. Before issue 13 the
// server allocated each declared message at once (300: 2.4 GiB of heap); now memory follows
// the bytes received, so the server holds about a read buffer a connection, and closes them at
// its setup timeout. Then ffmpeg publishes to the module and a player of the stream plays.
func testRTMPAmplification(t *testing.T) {
	s := start(t, options{})
	mod, port := s.createOnPort("rtmp-servers", func(port int) map[string]any {
		return map[string]any{"server_name": "hostile-rtmp", "server_port": port}
	})
	s.waitState("rtmp-servers", mod, "running", 10*time.Second)
	vod, vodPort := s.createOnPort("vod", func(p int) map[string]any {
		return playerBody("after-rtmp", p, map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": mod, "input_stream_id": "cam"})
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	// Each connection holds what the server allocates for an RTMP connection that is through
	// the handshake: its 16 KiB read buffer, the chunk reader and the goroutine
	// (docs/limits.md: 320 connections held 5.9 MiB of heap), at most connBytes.
	b := budget(rtmpAttackers*connBytes, fmt.Sprintf("%d connections × %d KiB", rtmpAttackers, connBytes>>10))
	w := s.watch()
	conns := make([]net.Conn, rtmpAttackers)
	errs := make([]error, rtmpAttackers)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	first := time.Now()
	for i := range rtmpAttackers {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			conns[i], errs[i] = rtmpAmplify(rtmpSources[i%len(rtmpSources)], addr)
		})
	}
	wg.Wait()
	last := time.Now()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("attacker %d from %s: %w", i, rtmpSources[i%len(rtmpSources)], err))
		}
	}
	if len(failed) > 0 {
		w.stop()
		t.Fatalf("%d of %d attackers were not served (the caps should not refuse them): %v", len(failed), rtmpAttackers, failed[:min(3, len(failed))])
	}
	t.Logf("%d connections declared %d MiB each (%d bytes sent each) in %v", rtmpAttackers, rtmpDeclared>>20, 1537+1536+16+12,
		last.Sub(first).Round(10*time.Millisecond))
	held := func() int {
		n := 0
		for _, src := range rtmpSources {
			n += s.held(src, addr)
		}
		return n
	}
	time.Sleep(rtmpHold)
	if n := held(); n != rtmpAttackers {
		t.Errorf("the server holds %d of the %d attacking connections", n, rtmpAttackers)
	}

	// The server closes every silent connection at its setup timeout (counted on its side).
	var cut time.Time
	for end := last.Add(rtmpSetupTimeout + 5*time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if held() == 0 {
			cut = time.Now()
			break
		}
	}
	f := w.stop()
	switch {
	case cut.IsZero():
		t.Errorf("the server still holds %d attacking connections %v after the last one connected (setup timeout %v)",
			held(), rtmpSetupTimeout+5*time.Second, rtmpSetupTimeout)
	case cut.Before(first.Add(rtmpSetupTimeout - 500*time.Millisecond)):
		t.Errorf("the attackers were all closed %v after the first connected, before the setup timeout (%v)", cut.Sub(first), rtmpSetupTimeout)
	default:
		t.Logf("the server had closed every attacker %v after the first and %v after the last connected (setup timeout %v)",
			cut.Sub(first).Round(10*time.Millisecond), cut.Sub(last).Round(10*time.Millisecond), rtmpSetupTimeout)
	}
	f.check(t, s, b)

	publish(t, rtmpOut(port, "cam")...)
	playHLS(t, vod, vodPort)
}
