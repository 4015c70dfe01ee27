package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
	"go.uber.org/goleak"
)

// listen listens on a free loopback port with cfg and decide; the listener is closed when the
// test ends.
func listen(t testing.TB, cfg Config, decide func(*Request) Reject) *Listener {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", cfg, decide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

func TestRejectionReachesCaller(t *testing.T) {
	ln := listen(t, Config{}, func(r *Request) Reject {
		switch r.StreamID() {
		case "busy":
			return RejectXConflict
		case "":
			return RejectXBadRequest
		}
		return RejectXNotFound
	})
	ctx := context.Background()
	for sid, want := range map[string]Reject{"busy": RejectXConflict, "nope": RejectXNotFound, "": RejectXBadRequest} {
		_, err := Dial(ctx, ln.Addr().String(), Config{StreamID: sid})
		var re *RejectError
		if !errors.As(err, &re) || re.Reason != want {
			t.Errorf("stream id %q: err %v, want rejection %v", sid, err, want)
		}
	}
	if !strings.Contains(RejectXNotFound.String(), "1404") {
		t.Errorf("String %q", RejectXNotFound.String())
	}
}

// TestRejectionSeenByLibsrt: a libsrt caller reports the rejection our listener sends. libsrt
// 1.5.1 prints its own text for SRT's reasons and one text for every application code (the
// exact code is checked by TestRejectionReachesCaller).
func TestRejectionSeenByLibsrt(t *testing.T) {
	requireSLT(t)
	ln := listen(t, Config{}, func(r *Request) Reject {
		if r.StreamID() == "publish/live/taken" {
			return RejectXConflict
		}
		return RejectBacklog
	})
	for sid, want := range map[string]string{
		"publish/live/taken": "REJECT reported from HS processing: Application-defined rejection reason",
		"other":              "REJECT reported from HS processing: Listener's backlog exceeded",
	} {
		s := startSLT(t, "-a:no", "-t:3", "-ll:warn", fmt.Sprintf("srt://%s?streamid=%s", ln.Addr(), sid), "file://con")
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Fatal("srt-live-transmit did not give up")
		}
		if out := s.stderr(); !strings.Contains(out, want) {
			t.Errorf("stream id %q: libsrt did not report %q:\n%s", sid, want, out)
		}
	}
}

func TestHSv4CallerRefused(t *testing.T) {
	ln := listen(t, Config{}, nil)
	r := newRawPeer(t, ln.Addr().String())
	cookie := r.induction()
	hs := wire.Handshake{Version: 4, Extension: wire.UDTDgram, InitialSeq: 1000, MTU: 1500, FlowWindow: 8192,
		Type: wire.HSConclusion, SocketID: r.id, Cookie: cookie}
	r.send(r.handshake(0, &hs))
	_, rsp, ok := r.recvHandshake(2 * time.Second)
	if !ok || !rsp.Type.IsRejection() || Reject(rsp.Type.RejectReason()) != RejectVersion {
		t.Fatalf("answer %+v ok=%v, want rejection %v", rsp, ok, RejectVersion)
	}
	// HSv4 callers do not read the rejection: a shutdown follows.
	b := r.recv(2 * time.Second)
	var ctl wire.Control
	if b == nil || wire.ParseControl(b, &ctl) != nil || ctl.Type != wire.CtrlShutdown || ctl.DestSocket != r.id {
		t.Fatalf("no shutdown after the rejection: %x", b)
	}
}

func TestConclusionAnsweredAgain(t *testing.T) {
	ln := listen(t, Config{}, nil)
	r := newRawPeer(t, ln.Addr().String())
	hs := r.conclusion(r.induction())
	var answers []wire.Handshake
	for range 3 {
		r.send(r.handshake(0, &hs))
		_, rsp, ok := r.recvHandshake(2 * time.Second)
		if !ok {
			t.Fatal("no answer")
		}
		answers = append(answers, rsp)
	}
	for _, a := range answers {
		if a.Type != wire.HSConclusion || a.SocketID != answers[0].SocketID || a.HSCmd != wire.ExtHSRsp {
			t.Fatalf("answers differ: %+v", answers)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, _, err := ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if c, _, err := ln.Accept(ctx2); err == nil {
		t.Fatalf("a second connection %v for a repeated conclusion", c.RemoteAddr())
	}
}

func TestRefusedExtensions(t *testing.T) {
	ln := listen(t, Config{}, nil)
	r := newRawPeer(t, ln.Addr().String())
	cookie := r.induction()
	cases := []struct {
		name string
		edit func(*wire.Handshake) []byte
		want Reject
	}{
		{"file congestion", func(h *wire.Handshake) []byte { _ = h.SetCongestion("file"); return nil }, RejectCongestion},
		{"stream mode", func(h *wire.Handshake) []byte { h.HS.Flags |= wire.FlagStream; return nil }, RejectMessageAPI},
		{"no HSREQ", func(h *wire.Handshake) []byte { h.HSCmd = 0; return nil }, RejectRogue},
		{"KM without passphrase", func(h *wire.Handshake) []byte {
			h.KMCmd, h.KM = wire.ExtKMReq, make([]byte, 56)
			return nil
		}, RejectUnsecure},
		{"packet filter", func(h *wire.Handshake) []byte {
			return []byte{0, byte(wire.ExtFilter), 0, 1, 'f', 'e', 'c', 0}
		}, RejectFilter},
		{"group", func(h *wire.Handshake) []byte {
			return []byte{0, byte(wire.ExtGroup), 0, 1, 0, 0, 0, 1}
		}, RejectGroup},
		{"extension area of 1 byte", func(h *wire.Handshake) []byte { return []byte{0} }, RejectRogue},
		{"extension longer than the datagram", func(h *wire.Handshake) []byte {
			return []byte{0, byte(wire.ExtSID), 0x01, 0}
		}, RejectRogue},
	}
	for i, c := range cases {
		r.id = uint32(100 + i)
		hs := r.conclusion(cookie)
		extra := c.edit(&hs)
		b := append(r.handshake(0, &hs), extra...)
		r.send(b)
		_, rsp, ok := r.recvHandshake(2 * time.Second)
		if !ok || !rsp.Type.IsRejection() || Reject(rsp.Type.RejectReason()) != c.want {
			t.Errorf("%s: answer type %v ok=%v, want rejection %v", c.name, rsp.Type, ok, c.want)
		}
	}
}

func TestWrongCookieIgnored(t *testing.T) {
	accepted := make(chan struct{}, 1)
	ln := listen(t, Config{}, func(*Request) Reject { accepted <- struct{}{}; return RejectNone })
	r := newRawPeer(t, ln.Addr().String())
	cookie := r.induction()
	hs := r.conclusion(cookie + 1)
	r.send(r.handshake(0, &hs))
	if b := r.recv(300 * time.Millisecond); b != nil {
		t.Fatalf("answered a wrong cookie: %x", b)
	}
	if len(accepted) != 0 {
		t.Fatal("decide ran for a wrong cookie")
	}
}

func TestPeerIdleTimeout(t *testing.T) {
	ln := listen(t, Config{PeerIdleTimeout: 500 * time.Millisecond}, nil)
	r := newRawPeer(t, ln.Addr().String())
	hs := r.conclusion(r.induction())
	r.send(r.handshake(0, &hs))
	if _, _, ok := r.recvHandshake(2 * time.Second); !ok {
		t.Fatal("no conclusion answer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, _, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Read(make([]byte, 1500))
	if !errors.Is(err, ErrPeerIdle) {
		t.Fatalf("Read: %v, want ErrPeerIdle", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("idle after %v", d)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, ErrPeerIdle) {
		t.Errorf("Write after idle: %v", err)
	}
	c.Close()
}

func TestListenerCloseEndsConnections(t *testing.T) {
	ln := listen(t, Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	caller, c := dialAccepted(ctx, t, ln, Config{})
	ln.Close()
	ln.Close()
	if _, err := c.Read(make([]byte, 1500)); !errors.Is(err, ErrClosed) {
		t.Errorf("accepted conn Read after listener Close: %v", err)
	}
	// The caller got a shutdown.
	if _, err := caller.Read(make([]byte, 1500)); !errors.Is(err, io.EOF) {
		t.Errorf("caller Read: %v, want io.EOF", err)
	}
	if _, err := caller.Write([]byte("x")); !errors.Is(err, ErrPeerClosed) {
		t.Errorf("caller Write: %v, want ErrPeerClosed", err)
	}
	c.Close()
}

func TestDialTimeoutLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	port := udpPort(t)
	start := time.Now()
	_, err := Dial(context.Background(), loopback(port), Config{ConnectTimeout: 600 * time.Millisecond})
	if !errors.Is(err, ErrConnectTimeout) {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

func TestRefusedDialLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := Listen("127.0.0.1:0", Config{}, func(*Request) Reject { return RejectXForbidden })
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		_, err := Dial(context.Background(), ln.Addr().String(), Config{})
		var re *RejectError
		if !errors.As(err, &re) || re.Reason != RejectXForbidden {
			t.Fatalf("err %v", err)
		}
	}
	ln.Close()
}

func TestCloseLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := Listen("127.0.0.1:0", Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var conns []*Conn
	for range 5 {
		c, err := Dial(ctx, ln.Addr().String(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	for range conns {
		c, _, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("read %q %v", buf[:n], err)
		}
	}
	for _, c := range conns {
		c.Close()
		c.Close()
	}
	ln.Close()
}

func TestDialContextCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := Dial(ctx, loopback(udpPort(t)), Config{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

// TestAddressFamilies: an IPv6 listener, and a dual-stack one (":0") reached over IPv4, whose
// peers arrive as IPv4-mapped addresses and are answered as IPv4.
func TestAddressFamilies(t *testing.T) {
	for _, c := range []struct{ listen, dial string }{
		{"[::1]:0", "[::1]:%d"},
		{":0", "127.0.0.1:%d"},
	} {
		ln, err := Listen(c.listen, Config{}, nil)
		if err != nil {
			t.Logf("%s: %v (no IPv6 here?)", c.listen, err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		port := ln.Addr().(*net.UDPAddr).Port
		conn, err := Dial(ctx, fmt.Sprintf(c.dial, port), Config{StreamID: "family"})
		if err != nil {
			t.Fatalf("%s: %v", c.listen, err)
		}
		s, req, err := ln.Accept(ctx)
		if err != nil || req.StreamID() != "family" {
			t.Fatalf("%s: accept %v %v", c.listen, err, req)
		}
		if _, err := conn.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if n, err := s.Read(buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("%s: read %q %v", c.listen, buf[:n], err)
		}
		if _, err := s.Write([]byte("back")); err != nil {
			t.Fatal(err)
		}
		if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "back" {
			t.Fatalf("%s: read back %q %v", c.listen, buf[:n], err)
		}
		conn.Close()
		s.Close()
		ln.Close()
		cancel()
	}
}
