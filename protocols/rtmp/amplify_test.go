package rtmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/yutopp/go-rtmp/handshake"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// amplify is the attack on one connection: the handshake, Set Chunk Size 2^31-1, a
// type 0 header that declares an 8 MiB video message, and nothing more. It returns the open
// connection, or nil when the server closed it during the handshake (refused).
func amplify(t testing.TB, src, addr string) net.Conn {
	t.Helper()
	c := testutil.DialFrom(t, src, addr)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := handshake.HandshakeWithServer(c, c, &handshake.Config{SkipHandshakeVerification: true}); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("handshake from %s neither served nor refused: %v", src, err)
		}
		_ = c.Close()
		return nil
	}
	out := append(setChunkSize(1<<31-1), 0x06, 0, 0, 0, 0x80, 0, 0, msgVideo, 1, 0, 0, 0)
	if _, err := c.Write(out); err != nil {
		t.Fatalf("write from %s: %v", src, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c
}

// liveHeap is the heap in use after a full collection, in bytes.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// waitAssembling waits until n goroutines wait for the payload of a message: every attacking
// connection's header has been read and the server sits waiting for its bytes.
func waitAssembling(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 16<<20)
	for {
		got := bytes.Count(buf[:runtime.Stack(buf, true)], []byte("(*chunkReader).readPayload("))
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections wait for a payload, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAmplification is issue 13's first case: connections that declare 8 MiB messages and
// send nothing of them used to cost 8 MiB of heap each (300 of them: 2.4 GiB). Now the heap
// follows the bytes sent: a connection that is through the handshake costs its 16 KiB read
// buffer and its state, and the caps refuse what is past them. A real publisher and a reader
// still work while the attackers hold their connections.
func TestAmplification(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	func() {
		reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
		srv := &Server{Registry: reg, MaxConnections: 320, MaxConnectionsPerAddr: 100, Log: testLog(t)}
		addr, stop := startServerStop(t, srv)
		defer stop()

		heap0 := liveHeap()
		// Four addresses try 105 connections each: the first three get 100 each (5 refused
		// per address), the fourth gets the last 20 slots (85 refused by the total cap).
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		perSrc := map[string]int{}
		srcs := []string{"127.0.1.1", "127.0.1.2", "127.0.1.3", "127.0.1.4"}
		for _, src := range srcs {
			for range 105 {
				if c := amplify(t, src, addr); c != nil {
					conns = append(conns, c)
					perSrc[src]++
				}
			}
		}
		for i, src := range srcs {
			if want := []int{100, 100, 100, 20}[i]; perSrc[src] != want {
				t.Errorf("%s: %d connections served, want %d", src, perSrc[src], want)
			}
		}
		cs := srv.ConnStats()
		if cs.Open != 320 || cs.RefusedMaxPerAddr != 15 || cs.RefusedMaxConns != 85 {
			t.Fatalf("connection stats %+v, want 320 open, 15 refused per address, 85 by the total", cs)
		}
		waitAssembling(t, 320)
		grown := liveHeap() - heap0
		// What each connection sent: C0+C1+C2 (3073 bytes), Set Chunk Size (16), header (12).
		const sent = 320 * (3073 + 16 + 12)
		const perConn = 32 << 10
		t.Logf("320 connections declaring 8 MiB each (%d bytes sent): heap grew %d KiB (%d bytes a connection); the reader before issue 13 grew it by 2.4 GiB for 300",
			sent, grown>>10, grown/320)
		if grown > 320*perConn {
			t.Fatalf("heap grew %d KiB for 320 connections, over %d KiB a connection", grown>>10, perConn>>10)
		}

		// The last address's connections close: their slots come back, and a real publisher
		// and a reader are served while the other 300 attackers hang on.
		for _, c := range conns[300:] {
			_ = c.Close()
		}
		conns = conns[:300]
		testutil.Eventually(t, 10*time.Second, "the freed slots", func() bool { return srv.ConnStats().Open == 300 })
		url := fmt.Sprintf("rtmp://%s/live/after", addr)
		pub := startFFmpeg(t, append(encodeArgs(6, "500k"), "-f", "flv", url)...)
		strm := waitPublished(t, reg, "after", 20*time.Second)
		r, err := strm.NewReader("test")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		readUnits(t, r, 50, 20*time.Second)
		if err := pub.Wait(30 * time.Second); err != nil {
			t.Fatalf("publisher: %v", err)
		}
	}()
	base.Check(t, 15*time.Second)
}

// TestSetupTimeout closes connections that do not publish or play in time, however they
// trickle: one stuck in the handshake, one that sends a message every 300 ms after it.
func TestSetupTimeout(t *testing.T) {
	srv := &Server{Registry: stream.NewRegistry(stream.Options{}), SetupTimeout: time.Second, Log: testLog(t)}
	addr := startServer(t, srv)
	start := time.Now()

	// Stops in the middle of C1.
	half := testutil.DialFrom(t, "127.0.0.1", addr)
	defer half.Close()
	if _, err := half.Write(append([]byte{3}, make([]byte, 700)...)); err != nil {
		t.Fatal(err)
	}
	// Trickles: after the handshake, a Window Acknowledgement Size every 300 ms, for ever.
	trickle := testutil.DialFrom(t, "127.0.0.1", addr)
	defer trickle.Close()
	if err := handshake.HandshakeWithServer(trickle, trickle, &handshake.Config{SkipHandshakeVerification: true}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Duration, 2)
	go func() {
		cw := newChunkWriter(trickle)
		for {
			if err := cw.writeMessage(csidControl, msgWinAckSize, 0, 0, []byte{0, 0, 0x10, 0}); err != nil {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		ended <- time.Since(start)
	}()
	go func() {
		_, _ = io.Copy(io.Discard, half)
		ended <- time.Since(start)
	}()
	for range 2 {
		select {
		case d := <-ended:
			// Closed after the setup timeout, not before.
			if d < 900*time.Millisecond {
				t.Errorf("closed after %v, before the 1 s setup timeout", d)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a connection that neither publishes nor plays is still open after 30 s")
		}
	}
}

// TestSlowPublisher: a publisher that stops in the middle of a message and then trickles a
// byte every 300 ms is closed after the read timeout; a real publisher that keeps sending
// outlives both the setup and the read timeouts.
func TestSlowPublisher(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv := &Server{Registry: reg, SetupTimeout: time.Second, ReadTimeout: time.Second, Log: testLog(t)}
	addr := startServer(t, srv)

	cl, err := dial(context.Background(), target{Addr: addr, App: "live", Name: "slow", TCURL: "rtmp://" + addr + "/live"}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.c.close()
	if err := cl.connect(); err != nil {
		t.Fatal(err)
	}
	id, err := cl.createStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.c.writeCommand(csidData, id, "publish", 0, nil, "slow", "live"); err != nil {
		t.Fatal(err)
	}
	if err := cl.awaitStatus(codePublishStart); err != nil {
		t.Fatal(err)
	}
	// An audio message that declares 1000 bytes, then one byte every 300 ms.
	start := time.Now()
	if _, err := cl.c.nc.Write([]byte{0x04, 0, 0, 0, 0, 0x03, 0xe8, msgAudio, byte(id), 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	var closedAfter time.Duration
	for range 100 {
		time.Sleep(300 * time.Millisecond)
		if _, err := cl.c.nc.Write([]byte{0xaf}); err != nil {
			closedAfter = time.Since(start)
			break
		}
	}
	if closedAfter == 0 {
		t.Fatal("a publisher trickling a byte every 300 ms is still served after 30 s")
	}
	if closedAfter < time.Second {
		t.Fatalf("closed after %v, before the 1 s read timeout", closedAfter)
	}
	testutil.Eventually(t, 10*time.Second, "the end of the slow publication", func() bool { return len(srv.ActiveStreams()) == 0 })

	// ffmpeg publishes for 4 s, past both timeouts, without being cut.
	pub := startFFmpeg(t, append(encodeArgs(4, "500k"), "-f", "flv", "rtmp://"+addr+"/live/moving")...)
	strm := waitPublished(t, reg, "moving", 20*time.Second)
	r, err := strm.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// 25 video frames a second and 43 AAC frames: 3 s of media is past both timeouts.
	readUnits(t, r, 3*(25+43), 20*time.Second)
	if err := pub.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v", err)
	}
}
