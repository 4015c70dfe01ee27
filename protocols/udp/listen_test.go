package udp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// withAddr is opts listening on port, every local address.
func withAddr(opts Options, port int) Options {
	opts.Addr = fmt.Sprintf(":%d", port)
	return opts
}

// startListen runs Listen on a free port until the test ends.
func startListen(t *testing.T, s *stream.Stream, opts Options) int {
	t.Helper()
	port := testutil.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Listen(ctx, s, withAddr(opts, port)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Listen: %v", err)
		}
	})
	return port
}

// publishUDP runs ffmpeg sending the test source to the port for the given seconds.
func publishUDP(ctx context.Context, t *testing.T, port int, seconds float64) error {
	args := append(streamtest.CBRArgs(seconds, true), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port))
	return streamtest.RunFFmpeg(ctx, t, args...)
}

// TestListenFFmpeg is not parallel: it measures rates.
func TestListenFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("udp-listen", stream.Options{})
	port := startListen(t, s, Options{IdleTimeout: time.Second})
	streamtest.CheckCBRLive(t, s, func() error { return publishUDP(context.Background(), t, port, 10) }, 200)
}

// TestListenReconnect is not parallel: it counts the process's goroutines and descriptors.
func TestListenReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("udp-reconnect", stream.Options{})
	port := testutil.FreePort(t)
	streamtest.CheckReconnects(t, s, 4, func(ctx context.Context) error {
		return Listen(ctx, s, Options{Addr: fmt.Sprintf(":%d", port), IdleTimeout: time.Second})
	}, func() error { return publishUDP(context.Background(), t, port, 2) })
}

func TestListenRandomBytes(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("udp-random", stream.Options{})
	port := startListen(t, s, Options{IdleTimeout: 300 * time.Millisecond})
	conn, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	junk := make([]byte, 2<<20)
	_, _ = rand.Read(junk)
	for off, i := 0, 0; off < len(junk); i++ {
		n := []int{1316, 188, 7, 1500, 9000, 376}[i%6]
		p := junk[off:min(off+n, len(junk))]
		if i%3 == 0 && len(p) >= 188 {
			for k := 0; k+188 <= len(p); k += 188 {
				p[k] = 0x47 // sync-aligned garbage starts sessions
			}
		}
		if _, err := conn.Write(p); errors.Is(err, syscall.ECONNREFUSED) {
			// Listen binds in its goroutine: a datagram sent before that is refused (ICMP).
			time.Sleep(10 * time.Millisecond)
		} else if err != nil {
			t.Fatal(err)
		}
		off += n
		if i%64 == 0 {
			time.Sleep(time.Millisecond) // let the receiver keep up on loopback
		}
	}
	testutil.Eventually(t, 10*time.Second, "the garbage session to end", func() bool { return !s.Publishing() })
	col := streamtest.Collect(t, s)
	if err := publishUDP(context.Background(), t, port, 3); err != nil {
		t.Fatal(err)
	}
	// A working publisher after the garbage.
	streamtest.CheckCBRReceived(t, s, col, 50, 10*time.Second)
}

// TestListenNoAddr: an empty Addr is refused at once, not bound to a random port.
func TestListenNoAddr(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Listen(ctx, stream.New("udp-noaddr", stream.Options{}), Options{IdleTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no address") {
		t.Fatalf("Listen with an empty Addr: %v, want a no-address error", err)
	}
}
