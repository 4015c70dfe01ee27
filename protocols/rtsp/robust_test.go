package rtsp

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestReconnect publishes four times in a row, over both transports, one of them killed
// rather than stopped: the Stream marks three
// discontinuities, and goroutines and open files come back to where they were, while the
// server runs and once it stopped.
func TestReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	before := testutil.TakeBaseline()
	rs := startServer(t, ListenOptions{})
	c := collect(t, rs.strm)
	time.Sleep(200 * time.Millisecond)
	idle := testutil.TakeBaseline()
	// The third publisher is killed: no TEARDOWN, the connection just drops.
	for i, transport := range []string{"tcp", "udp", "tcp", "udp"} {
		p := startPublisher(t, rs.url, transport, "libx264", "aac", 2)
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("publisher %d", i+1), func() bool {
			return rs.strm.Publishing() && len(rs.strm.Tracks()) == 2
		})
		if i == 2 {
			time.Sleep(time.Second)
			p.Kill()
		} else if err := p.Wait(30 * time.Second); err != nil {
			t.Fatalf("publisher %d: %v", i+1, err)
		}
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("publisher %d to leave", i+1), func() bool { return !rs.strm.Publishing() })
	}
	if d := rs.strm.Discontinuities(); d != 3 {
		t.Errorf("stream discontinuities = %d, want 3", d)
	}
	testutil.Eventually(t, 10*time.Second, "the reader to see 3 discontinuities", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.discs == 3
	})
	c.check(t)
	idle.Check(t, 20*time.Second)
	now := testutil.TakeBaseline()
	t.Logf("while serving: goroutines %d, fds %d (baseline %d, %d)", now.Goroutines, now.FDs, idle.Goroutines, idle.FDs)
	if err := rs.stop(); err != nil {
		t.Fatal(err)
	}
	// The collector's goroutine ends with the test; allow for it.
	before.Goroutines++
	before.Check(t, 20*time.Second)
}

// TestRobustness sends 2 MB of random bytes to every port of the server, and some malformed
// requests, then checks that a real publisher still works.
func TestRobustness(t *testing.T) {
	t.Parallel()
	testutil.RequireFFmpeg(t)
	rs := startServer(t, ListenOptions{})
	addr := rs.srv.Addr().String()
	rng := rand.New(rand.NewPCG(7, 11))
	const total = 2 << 20

	// TCP: random bytes over as many connections as the server closes.
	sent := 0
	for sent < total {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for sent < total {
			buf := make([]byte, 32<<10)
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			n, err := conn.Write(buf)
			sent += n
			if err != nil {
				break
			}
		}
		conn.Close()
	}

	// Malformed requests: a huge body, a broken SDP, interleaved data before any session.
	for _, req := range []string{
		"ANNOUNCE rtsp://" + addr + "/live RTSP/1.0\r\nCSeq: 1\r\nContent-Type: application/sdp\r\nContent-Length: 999999999\r\n\r\nv=0",
		"ANNOUNCE rtsp://" + addr + "/live RTSP/1.0\r\nCSeq: 1\r\nContent-Type: application/sdp\r\nContent-Length: 20\r\n\r\nm=video 0 RTP/AVP 96",
		"SETUP rtsp://" + addr + "/live/trackID=0 RTSP/1.0\r\nCSeq: 2\r\nTransport: RTP/AVP/TCP;interleaved=0-1;mode=record\r\n\r\n",
		"$\x00\xff\xff" + strings.Repeat("\x80", 1000),
		"OPTIONS * RTSP/1.0\r\nCSeq: " + strings.Repeat("9", 100000) + "\r\n\r\n",
	} {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write([]byte(req))
		_, _ = bufio.NewReader(conn).ReadString('\n')
		conn.Close()
	}

	// UDP: random datagrams to the RTP and RTCP ports.
	rtpPort, rtcpPort := rs.srv.UDPPorts()
	for _, port := range []int{rtpPort, rtcpPort} {
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		for sent := 0; sent < total; {
			buf := make([]byte, 1200+rng.IntN(272))
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			n, _ := conn.Write(buf)
			sent += n
		}
		conn.Close()
	}
	t.Logf("sent %d random bytes over TCP and %d to each UDP port", total, total)

	for _, transport := range []string{"tcp", "udp"} {
		c := collect(t, rs.strm)
		p := startPublisher(t, rs.url, transport, "libx264", "aac", 3)
		testutil.Eventually(t, 20*time.Second, transport+" publisher after the noise", func() bool {
			return rs.strm.Publishing() && c.count(0) >= 25
		})
		if err := p.Wait(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 20*time.Second, "publisher to leave", func() bool { return !rs.strm.Publishing() })
		c.check(t)
	}
}
