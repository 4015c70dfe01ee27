package httpts

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// serveOpts serves a Server with opts on a loopback port until the test ends.
func serveOpts(t *testing.T, s *stream.Stream, opts ServerOptions) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := NewServer(s, opts)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// closedAfter waits until the server closes c and returns how long that took from start; it
// fails after limit. What the server sends before closing (an error answer) is read.
func closedAfter(t *testing.T, c net.Conn, start time.Time, limit time.Duration) time.Duration {
	t.Helper()
	_ = c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection from %s still open after %s", c.LocalAddr(), limit)
	}
	return time.Since(start)
}

// TestServerSlowClients: a client that stops in its headers, one that trickles its body, and
// one idle between requests are each closed after their timeout; a live upload at its real
// rate lasts longer than all of them.
func TestServerSlowClients(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("http-slow", stream.Options{})
	_, addr := serveOpts(t, s, ServerOptions{IdleTimeout: time.Second, ReadHeaderTimeout: time.Second,
		KeepAliveTimeout: time.Second, MaxConnectionsPerAddr: 8})
	start := time.Now()

	headers := sendRaw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\n")
	trickle := sendRaw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := trickle.Write([]byte{0x47}); err != nil {
				return
			}
		}
	}()
	idle := sendRaw(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %s", resp.Status)
	}
	for name, c := range map[string]net.Conn{"headers": headers, "trickling body": trickle, "keep-alive": idle} {
		if d := closedAfter(t, c, start, 30*time.Second); d < time.Second {
			t.Errorf("%s: closed after %v, before its 1 s timeout", name, d)
		}
	}

	// A live upload for 4 s, at its real rate, is not cut by the 1 s timeouts.
	col := streamtest.Collect(t, s)
	if err := publishHTTP(t, "http://"+addr+"/", 4, "-f", "mpegts"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
	if n := len(col.Snapshot()); n < 150 {
		t.Fatalf("%d units, want about 4 s", n)
	}
}

// TestServerConnectionCaps: past the per-address cap a connection is closed at once; another
// address is served; slots come back.
func TestServerConnectionCaps(t *testing.T) {
	s := stream.New("http-caps", stream.Options{})
	srv, addr := serveOpts(t, s, ServerOptions{MaxConnections: 3, MaxConnectionsPerAddr: 2})
	get := func(c net.Conn) int {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return 0
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("neither answered nor closed")
			}
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	a1, a2 := testutil.DialFrom(t, "127.0.0.2", addr), testutil.DialFrom(t, "127.0.0.2", addr)
	if get(a1) != 405 || get(a2) != 405 {
		t.Fatal("the first two connections from 127.0.0.2 were not served")
	}
	if code := get(testutil.DialFrom(t, "127.0.0.2", addr)); code != 0 {
		t.Fatalf("a third connection from 127.0.0.2 was answered %d", code)
	}
	if get(testutil.DialFrom(t, "127.0.0.3", addr)) != 405 {
		t.Fatal("127.0.0.3 was not served")
	}
	if code := get(testutil.DialFrom(t, "127.0.0.4", addr)); code != 0 {
		t.Fatalf("a fourth connection was answered %d past the total cap", code)
	}
	if st := srv.ConnStats(); st.Open != 3 || st.RefusedMaxPerAddr != 1 || st.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v", st)
	}
	_ = a1.Close()
	testutil.Eventually(t, 10*time.Second, "the freed slot", func() bool { return srv.ConnStats().Open == 2 })
	if get(testutil.DialFrom(t, "127.0.0.2", addr)) != 405 {
		t.Fatal("127.0.0.2 not served after a slot was freed")
	}
}

// TestServerHeaderLimit: headers past 16 KiB are refused with 431.
func TestServerHeaderLimit(t *testing.T) {
	s := stream.New("http-header", stream.Options{})
	_, addr := serveOpts(t, s, ServerOptions{})
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		req.Header.Set(fmt.Sprintf("X-Pad-%d", i), fmt.Sprintf("%01000d", i))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("40 KB of headers: %s, want 431", resp.Status)
	}
}

// TestServerRefusedBodyStops: a request refused without its body being read (405 for another
// method, 409 while another publisher sends) whose body then stops is closed after the idle
// timeout like a publisher's; net/http reads what is left of an unread body (up to 256 KiB)
// before it answers, and that read had no deadline, so such a client held its connection,
// and the listen input's few slots, for as long as it liked.
func TestServerRefusedBodyStops(t *testing.T) {
	s := stream.New("http-refused", stream.Options{})
	srv, addr := serveOpts(t, s, ServerOptions{IdleTimeout: time.Second, ReadHeaderTimeout: time.Second,
		KeepAliveTimeout: time.Second})
	start := time.Now()
	patch := sendRaw(t, addr, "PATCH / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nG\r\n")
	sized := sendRaw(t, addr, "DELETE / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nG")
	// A publisher's place taken (busy), as while one sends: the next POST is answered 409.
	srv.busy.Store(true)
	defer srv.busy.Store(false)
	conflict := sendRaw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nG\r\n")
	for name, c := range map[string]net.Conn{"405 chunked": patch, "405 sized": sized, "409 chunked": conflict} {
		closedAfter(t, c, start, 10*time.Second)
		t.Logf("%s: closed after %v", name, time.Since(start))
	}
}

// sendRaw connects to addr from 127.0.0.1 and writes req, as a client that may then stop.
func sendRaw(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c := testutil.DialFrom(t, "127.0.0.1", addr)
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	return c
}
