package rtsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// rtspClient is a raw RTSP connection from a chosen loopback address.
type rtspClient struct {
	c    net.Conn
	br   *bufio.Reader
	addr string
	cseq int
	// session is the Session header of the last answer that had one, without its timeout.
	session string
}

func dialRTSP(t *testing.T, src, addr string) *rtspClient {
	t.Helper()
	c := testutil.DialFrom(t, src, addr)
	return &rtspClient{c: c, br: bufio.NewReader(c), addr: addr}
}

// do sends a request and returns the response's status code, or 0 when the connection ended
// (closed by the server). The deadline only turns a hang into a failure.
func (rc *rtspClient) do(t *testing.T, method, path, headers, body string) int {
	t.Helper()
	rc.cseq++
	req := fmt.Sprintf("%s rtsp://%s%s RTSP/1.0\r\nCSeq: %d\r\n%s", method, rc.addr, path, rc.cseq, headers)
	if body != "" {
		req += fmt.Sprintf("Content-Type: application/sdp\r\nContent-Length: %d\r\n", len(body))
	}
	req += "\r\n" + body
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write([]byte(req)); err != nil {
		return 0
	}
	line, err := rc.br.ReadString('\n')
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s %s: no answer and no close within 10 s", method, path)
		}
		return 0
	}
	var code int
	if _, err := fmt.Sscanf(line, "RTSP/1.0 %d", &code); err != nil {
		t.Fatalf("%s: status line %q", method, line)
	}
	length := 0
	for {
		h, err := rc.br.ReadString('\n')
		if err != nil {
			return 0
		}
		if h == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(h), "content-length:"); ok {
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &length)
		}
		if strings.HasPrefix(strings.ToLower(h), "session:") {
			rc.session, _, _ = strings.Cut(strings.TrimSpace(h[len("session:"):]), ";")
		}
	}
	_, _ = io.CopyN(io.Discard, rc.br, int64(length))
	return code
}

// closedWithin waits until the server closes the connection, and returns how long that took
// from start; it fails after limit.
func (rc *rtspClient) closedWithin(t *testing.T, start time.Time, limit time.Duration) time.Duration {
	t.Helper()
	_ = rc.c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, rc.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection from %s still open after %s", rc.c.LocalAddr(), limit)
	}
	return time.Since(start)
}

const h264SDP = "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=test\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
	"m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\na=control:trackID=0\r\n"

// TestSetupTimeout: connections that never play or record are closed after the setup
// timeout, whether they send nothing, trickle a request or repeat OPTIONS; real publishers
// over TCP and UDP outlive it.
func TestSetupTimeout(t *testing.T) {
	testutil.RequireFFmpeg(t)
	rs := startServer(t, ListenOptions{SetupTimeout: time.Second, ReadTimeout: 2 * time.Second})
	addr := rs.srv.Addr().String()
	start := time.Now()

	silent := dialRTSP(t, "127.0.0.1", addr)
	trickle := dialRTSP(t, "127.0.0.1", addr)
	options := dialRTSP(t, "127.0.0.1", addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		req := "OPTIONS rtsp://" + addr + "/live RTSP/1.0\r\nCSeq: 1\r\n"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := trickle.c.Write([]byte{req[i%len(req)]}); err != nil {
				return
			}
		}
	}()
	optionsDone := make(chan int, 1)
	go func() {
		// A complete OPTIONS every 300 ms, answered each time, until the server closes.
		n := 0
		for {
			options.cseq++
			msg := fmt.Sprintf("OPTIONS rtsp://%s/live RTSP/1.0\r\nCSeq: %d\r\n\r\n", addr, options.cseq)
			if _, err := options.c.Write([]byte(msg)); err != nil {
				break
			}
			if _, err := options.br.ReadString('\n'); err != nil {
				break
			}
			n++
			time.Sleep(300 * time.Millisecond)
		}
		optionsDone <- n
	}()
	for name, rc := range map[string]*rtspClient{"silent": silent, "trickling": trickle} {
		if d := rc.closedWithin(t, start, 30*time.Second); d < time.Second {
			t.Errorf("%s connection closed after %v, before the 1 s setup timeout", name, d)
		}
	}
	select {
	case n := <-optionsDone:
		if n < 2 {
			t.Errorf("OPTIONS answered %d times before the close, want several", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a connection repeating OPTIONS is still open after 30 s")
	}

	// Real publishers over both transports stream for 4 s, past the setup and read timeouts.
	for _, transport := range []string{"tcp", "udp"} {
		c := collect(t, rs.strm)
		p := startPublisher(t, rs.url, transport, "libx264", "aac", 4)
		if err := p.Wait(30 * time.Second); err != nil {
			t.Fatalf("%s publisher: %v", transport, err)
		}
		// 4 s at 25 fps: the publisher was not cut.
		if n := c.count(0); n < 90 {
			t.Fatalf("%s publisher: %d video units, want about 100", transport, n)
		}
		testutil.Eventually(t, 20*time.Second, "publisher to leave", func() bool { return !rs.strm.Publishing() })
	}
}

// TestConnectionCaps: past the per-address cap a connection is closed at once, another address
// is still served, and closed connections give their slots back.
func TestConnectionCaps(t *testing.T) {
	rs := startServer(t, ListenOptions{MaxConnections: 3, MaxConnectionsPerAddr: 2})
	addr := rs.srv.Addr().String()
	a1, a2 := dialRTSP(t, "127.0.0.2", addr), dialRTSP(t, "127.0.0.2", addr)
	if a1.do(t, "OPTIONS", "/live", "", "") != 200 || a2.do(t, "OPTIONS", "/live", "", "") != 200 {
		t.Fatal("the first two connections from 127.0.0.2 were not served")
	}
	if code := dialRTSP(t, "127.0.0.2", addr).do(t, "OPTIONS", "/live", "", ""); code != 0 {
		t.Fatalf("a third connection from 127.0.0.2 was answered %d", code)
	}
	if dialRTSP(t, "127.0.0.3", addr).do(t, "OPTIONS", "/live", "", "") != 200 {
		t.Fatal("127.0.0.3 was not served")
	}
	if code := dialRTSP(t, "127.0.0.4", addr).do(t, "OPTIONS", "/live", "", ""); code != 0 {
		t.Fatalf("a fourth connection was answered %d past the total cap", code)
	}
	st := rs.srv.ConnStats()
	if st.Open != 3 || st.RefusedMaxPerAddr != 1 || st.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v", st)
	}
	_ = a1.c.Close()
	testutil.Eventually(t, 10*time.Second, "the freed slot", func() bool { return rs.srv.ConnStats().Open == 2 })
	for i := range 50 {
		c := dialRTSP(t, "127.0.0.2", addr)
		if c.do(t, "OPTIONS", "/live", "", "") != 200 {
			t.Fatalf("cycle %d: 127.0.0.2 not served after a slot was freed", i)
		}
		_ = c.c.Close()
		testutil.Eventually(t, 10*time.Second, "the freed slot", func() bool { return rs.srv.ConnStats().Open == 2 })
	}
}

// TestSessionCaps: past the per-address session cap, ANNOUNCE and SETUP are answered 503;
// another address is not; a closed session frees its place.
func TestSessionCaps(t *testing.T) {
	rs := startServer(t, ListenOptions{MaxSessionsPerAddr: 1, MaxSessions: 3})
	addr := rs.srv.Addr().String()
	setup := "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n"

	pub := dialRTSP(t, "127.0.0.2", addr)
	if code := pub.do(t, "ANNOUNCE", "/live", "", h264SDP); code != 200 {
		t.Fatalf("ANNOUNCE: %d", code)
	}
	// Same address: the session is past the cap.
	second := dialRTSP(t, "127.0.0.2", addr)
	if code := second.do(t, "SETUP", "/live/trackID=0", setup, ""); code != 503 {
		t.Fatalf("a second session from 127.0.0.2: %d, want 503", code)
	}
	// Another address: not past a cap; nothing is recorded yet, so 404.
	if code := dialRTSP(t, "127.0.0.3", addr).do(t, "SETUP", "/live/trackID=0", setup, ""); code != 404 {
		t.Fatalf("a session from 127.0.0.3: %d, want 404", code)
	}
	// A third address: past the total, which counts the refused session of 127.0.0.2 too
	// while its connection is open.
	if code := dialRTSP(t, "127.0.0.4", addr).do(t, "SETUP", "/live/trackID=0", setup, ""); code != 503 {
		t.Fatalf("a session past the total cap: %d, want 503", code)
	}
	// Both sessions of 127.0.0.2 close with their connections: the address has its place back.
	_ = pub.c.Close()
	_ = second.c.Close()
	testutil.Eventually(t, 10*time.Second, "a session from 127.0.0.2 to be admitted again", func() bool {
		c := dialRTSP(t, "127.0.0.2", addr)
		defer c.c.Close()
		return c.do(t, "SETUP", "/live/trackID=0", setup, "") == 404
	})
}

// TestSetupTimeoutAfterSession: a publisher over UDP records, then tears its session down
// and keeps its RTSP connection (gortsplib closes the connections of a session that ends
// otherwise): the connection must start again within the setup timeout or go.
func TestSetupTimeoutAfterSession(t *testing.T) {
	rs := startServer(t, ListenOptions{SetupTimeout: time.Second})
	addr := rs.srv.Addr().String()
	rtp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rtp.Close()
	port := rtp.LocalAddr().(*net.UDPAddr).Port
	pub := dialRTSP(t, "127.0.0.1", addr)
	if code := pub.do(t, "ANNOUNCE", "/live", "", h264SDP); code != 200 {
		t.Fatalf("ANNOUNCE: %d", code)
	}
	if code := pub.do(t, "SETUP", "/live/trackID=0",
		fmt.Sprintf("Transport: RTP/AVP;unicast;client_port=%d-%d;mode=record\r\n", port, port+1), ""); code != 200 {
		t.Fatalf("SETUP: %d", code)
	}
	if code := pub.do(t, "RECORD", "/live", "Session: "+pub.session+"\r\n", ""); code != 200 {
		t.Fatalf("RECORD: %d", code)
	}
	// Recording lifted the setup deadline: the connection outlives it while the session
	// lasts (the read timeout, 10 s, is what ends a silent UDP publisher).
	time.Sleep(1500 * time.Millisecond)
	// Timed from before the request: the server starts its timer when the TEARDOWN arrives,
	// after this, and the reply comes later still.
	tornDown := time.Now()
	if code := pub.do(t, "TEARDOWN", "/live", "Session: "+pub.session+"\r\n", ""); code != 200 {
		t.Fatalf("TEARDOWN after 1.5 s of recording: %d", code)
	}
	if d := pub.closedWithin(t, tornDown, 30*time.Second); d < time.Second {
		t.Fatalf("connection closed %v after TEARDOWN, before the 1 s setup timeout", d)
	}
}
