package httpserve

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// serveTLSLimited serves h over HTTPS with lim, behind caps with EvictIdle (as the API and player
// ports are), on a loopback port until the test ends. It returns the capped listener, the
// address and the certificate file.
func serveTLSLimited(t *testing.T, h http.Handler, lim Limits, caps connlimit.Limits) (*connlimit.Listener, string, string) {
	t.Helper()
	cert, key := testutil.WriteCert(t, t.TempDir(), "limits")
	src, err := NewCertSource(cert, key, CertCheckEvery, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	caps.EvictIdle = true
	cl := connlimit.Wrap(ln, caps, nil)
	srv := New(h, lim, nil, slog.New(slog.DiscardHandler))
	srv.TLSConfig = src.ServerConfig()
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTLS(cl, "", "") }()
	t.Cleanup(func() { srv.Close(); <-done })
	return cl, ln.Addr().String(), cert
}

// h2Conn is a raw HTTP/2 client connection: TLS with ALPN h2, the preface sent, the server's
// SETTINGS read and acknowledged.
type h2Conn struct {
	c        *tls.Conn
	fr       *http2.Framer
	settings map[http2.SettingID]uint32
}

func dialH2(t *testing.T, addr, certFile string) *h2Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: testutil.CertPool(t, certFile), NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN chose %q, want h2", p)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	h := &h2Conn{c: c, fr: http2.NewFramer(c, c), settings: map[http2.SettingID]uint32{}}
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := h.fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("first frame from the server: %v, want its SETTINGS", f)
	}
	_ = sf.ForeachSetting(func(s http2.Setting) error { h.settings[s.ID] = s.Val; return nil })
	if err := h.fr.WriteSettingsAck(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Time{})
	return h
}

// get opens stream id with GET path (no body).
func (h *h2Conn) get(t *testing.T, id uint32, path string) {
	t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "x"}, {":path", path}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
}

// TestTLSHandshakeTimeout: a TCP connection to an HTTPS port that sends nothing, or only part of
// its ClientHello, is closed after the header timeout (which bounds the handshake).
func TestTLSHandshakeTimeout(t *testing.T) {
	t.Parallel()
	lim := Defaults()
	lim.Header = 700 * time.Millisecond
	_, addr, _ := serveTLSLimited(t, http.NotFoundHandler(), lim, connlimit.Limits{MaxConns: 16, MaxPerAddr: 16})
	for _, c := range []struct {
		name string
		send []byte
	}{
		{"silent", nil},
		{"half a ClientHello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01}},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(c.send); err != nil {
			t.Fatal(err)
		}
		took := closedWithin(t, conn, 10*time.Second)
		conn.Close()
		if took < lim.Header-100*time.Millisecond || took > lim.Header+3*time.Second {
			t.Errorf("%s: closed after %v, want about the %v header timeout", c.name, took, lim.Header)
		}
		t.Logf("%s: closed after %v (header timeout %v)", c.name, took, lim.Header)
	}
}

// TestH2Limits: an HTTPS port offers h2 with the documented limits in its SETTINGS (streams,
// frame size, flow-control windows, header list size); an h2 connection with no stream open is
// closed after the idle timeout; a stream whose client reads nothing (grants no flow-control
// window) is reset after the write stall, while the connection goes on serving others.
func TestH2Limits(t *testing.T) {
	t.Parallel()
	lim := Defaults()
	lim.Idle, lim.WriteStall = 1500*time.Millisecond, time.Second
	big := bytes.Repeat([]byte("x"), 4<<20)
	_, addr, cert := serveTLSLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			_, _ = w.Write(big)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}), lim, connlimit.Limits{MaxConns: 16, MaxPerAddr: 16})

	h := dialH2(t, addr, cert)
	want := map[http2.SettingID]uint32{
		http2.SettingMaxConcurrentStreams: h2MaxStreams,
		http2.SettingMaxFrameSize:         h2MaxFrame,
		http2.SettingInitialWindowSize:    h2ReceiveBuffer,
	}
	for id, v := range want {
		if got := h.settings[id]; got != v {
			t.Errorf("SETTINGS %v = %d, want %d", id, got, v)
		}
	}
	if got := h.settings[http2.SettingMaxHeaderListSize]; got < httpMaxHeaderBytes || got > httpMaxHeaderBytes+64<<10 {
		t.Errorf("SETTINGS %v = %d, want about %d", http2.SettingMaxHeaderListSize, got, httpMaxHeaderBytes)
	}

	// A stream of 4 MiB to a client that grants nothing past the initial 64 KiB window.
	h.get(t, 1, "/big")
	start := time.Now()
	var got int
	var reset time.Duration
	_ = h.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for reset == 0 {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("h2 read after %v: %v (%d bytes of the stalled stream)", time.Since(start), err, got)
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			got += len(f.Data())
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				reset = time.Since(start)
			}
		}
	}
	if got > 65535 || reset < lim.WriteStall-100*time.Millisecond || reset > lim.WriteStall+3*time.Second {
		t.Errorf("stalled stream: %d bytes sent, reset after %v; want at most the 64 KiB window and a reset after about %v", got, reset, lim.WriteStall)
	}
	t.Logf("stalled stream reset after %v with %d bytes sent (write stall %v)", reset, got, lim.WriteStall)

	// The connection still serves, once the client grants the connection-level window back
	// (the stalled stream used it all).
	if err := h.fr.WriteWindowUpdate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	h.get(t, 3, "/ok")
	for done := false; !done; {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("second stream: %v", err)
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamID == 3 && d.StreamEnded() {
			done = true
		}
		if hf, ok := f.(*http2.HeadersFrame); ok && hf.StreamID == 3 && hf.StreamEnded() {
			done = true
		}
	}

	// Now idle: closed (GOAWAY, then EOF) after the idle timeout.
	idleFrom := time.Now()
	var goaway bool
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			break
		}
		if _, ok := f.(*http2.GoAwayFrame); ok {
			goaway = true
		}
	}
	if took := time.Since(idleFrom); !goaway || took < lim.Idle-100*time.Millisecond || took > lim.Idle+4*time.Second {
		t.Errorf("idle h2 connection: GOAWAY %v, closed after %v; want both, after about %v", goaway, took, lim.Idle)
	} else {
		t.Logf("idle h2 connection closed after %v (idle timeout %v)", took, lim.Idle)
	}
}

// TestTLSEvictsIdle: the connection caps hold for HTTPS and HTTP/2 connections: at a full cap
// a new client is served in place of an idle h2 connection (no stream open), never of one with
// a request in flight, which completes.
func TestTLSEvictsIdle(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	cl, addr, cert := serveTLSLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok "+r.Proto)
	}), Defaults(), connlimit.Limits{MaxConns: 2, MaxPerAddr: 2})

	idle := dialH2(t, addr, cert)
	busy := testutil.TrustingClient(t, cert)
	var wg sync.WaitGroup
	var busyAnswer string
	var busyErr error
	wg.Go(func() {
		resp, err := busy.Get("https://" + addr + "/block")
		if err != nil {
			busyErr = err
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		busyAnswer = string(b)
	})
	<-entered

	// The cap is full (the idle h2 connection and the busy one): a third client is admitted in
	// place of the idle one.
	fresh := testutil.TrustingClient(t, cert)
	resp, err := fresh.Get("https://" + addr + "/ok")
	if err != nil {
		t.Fatalf("new client at a full cap: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok HTTP/2.0" {
		t.Errorf("new client: %q", b)
	}
	_ = idle.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := idle.fr.ReadFrame(); err != nil {
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Error("the idle h2 connection is still open after a new client took its place")
			}
			break
		}
	}
	waitStats(t, cl, "one eviction", func(s connlimit.Stats) bool { return s.EvictedMaxConns == 1 })

	close(release)
	wg.Wait()
	if busyErr != nil || !strings.HasPrefix(busyAnswer, "ok HTTP/2.0") {
		t.Errorf("request in flight at the eviction: %q, %v", busyAnswer, busyErr)
	}
}

// TestH2MaxStreams: an HTTP/2 connection carries h2MaxStreams requests at once; a stream opened
// past them while they are in flight is reset, and the ones in flight are answered.
func TestH2MaxStreams(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, h2MaxStreams+1), make(chan struct{})
	_, addr, cert := serveTLSLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "ok")
	}), Defaults(), connlimit.Limits{MaxConns: 16, MaxPerAddr: 16})
	h := dialH2(t, addr, cert)
	for i := range h2MaxStreams {
		h.get(t, uint32(2*i+1), "/hold")
	}
	for range h2MaxStreams {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("not every stream reached its handler")
		}
	}
	over := uint32(2*h2MaxStreams + 1)
	h.get(t, over, "/hold")
	_ = h.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var reset *http2.RSTStreamFrame
	for reset == nil {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("waiting for the reset of stream %d: %v", over, err)
		}
		if r, ok := f.(*http2.RSTStreamFrame); ok {
			reset = r
		}
	}
	if reset.StreamID != over || reset.ErrCode != http2.ErrCodeProtocol {
		t.Errorf("reset of stream %d (%v), want stream %d with PROTOCOL_ERROR", reset.StreamID, reset.ErrCode, over)
	}
	close(release)
	answered := map[uint32]bool{}
	for len(answered) < h2MaxStreams {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %d answers: %v", len(answered), err)
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
			answered[d.StreamID] = true
		}
	}
	if len(entered) != 0 {
		t.Errorf("the stream past the cap reached its handler")
	}
}
