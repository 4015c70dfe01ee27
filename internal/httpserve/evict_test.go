package httpserve

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// evictServer serves h on a loopback port behind caps with EvictIdle, as the API and player
// ports are (New's ConnState hook marks the idle connections), until the test ends.
func evictServer(t *testing.T, h http.Handler, lim connlimit.Limits) (*connlimit.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim.EvictIdle = true
	cl := connlimit.Wrap(ln, lim, nil)
	srv := New(h, Defaults(), nil, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(cl) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return cl, ln.Addr().String()
}

// waitStats polls the listener until ok holds.
func waitStats(t *testing.T, cl *connlimit.Listener, what string, ok func(connlimit.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(cl.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: stats %+v", what, cl.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sendFrom dials addr once from each of srcs and writes req on every connection.
func sendFrom(t *testing.T, addr, req string, srcs ...string) []*testutil.KeepAlive {
	t.Helper()
	var ks []*testutil.KeepAlive
	for _, src := range srcs {
		k := testutil.DialKeepAlive(t, src, addr)
		fmt.Fprint(k.Conn, req)
		ks = append(ks, k)
	}
	return ks
}

// admitEvicting has a new client from src served at the full cap (while says how the cap is
// held) and checks that oldest, named so in the failure, was closed for it; it returns the client.
func admitEvicting(t *testing.T, addr, src, while string, oldest *testutil.KeepAlive, name string) *testutil.KeepAlive {
	t.Helper()
	k := testutil.DialKeepAlive(t, src, addr)
	if st, err := k.Get("/"); err != nil || st != http.StatusOK {
		t.Fatalf("a new client while %s: %d, %v", while, st, err)
	}
	if !oldest.ClosedNow(t) {
		t.Fatalf("%s is still open after a new client was admitted", name)
	}
	return k
}

// closeAll closes the clients and waits until the listener counts none open.
func closeAll(t *testing.T, cl *connlimit.Listener, clients []*testutil.KeepAlive) {
	t.Helper()
	for _, k := range clients {
		k.Conn.Close()
	}
	waitStats(t, cl, "all closed", func(s connlimit.Stats) bool { return s.Open == 0 })
}

// TestHTTPEvictsIdle: at a full cap, a new client is served in place of the connection idle the
// longest: a kept-alive one between requests, or one that has not sent its headers whole (slow
// headers). Connections serving a request are never closed for it: when every one is busy the
// new client is refused at once.
func TestHTTPEvictsIdle(t *testing.T) {
	entered, release := make(chan struct{}, 8), make(chan struct{})
	cl, addr := evictServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "ok")
	}), connlimit.Limits{MaxConns: 4, MaxPerAddr: 2})

	// Four kept-alive connections from two addresses fill the total cap, each idle after one
	// answer; the first answered is idle the longest (the server marks a connection idle just
	// after its answer is sent: the next one is opened once it did).
	var idle []*testutil.KeepAlive
	for i, src := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"} {
		k := testutil.DialKeepAlive(t, src, addr)
		if st, err := k.Get("/"); err != nil || st != http.StatusOK {
			t.Fatalf("client from %s: %d, %v", src, st, err)
		}
		idle = append(idle, k)
		waitStats(t, cl, "idle after an answer", func(s connlimit.Stats) bool { return s.Idle == i+1 })
	}
	// A fifth address is served; the connection idle the longest, and only it, is closed.
	fifth := admitEvicting(t, addr, "127.0.0.4", "four connections were idle at the cap", idle[0], "the connection idle the longest")
	// The others still serve their next request.
	for i, k := range idle[1:] {
		if st, err := k.Get("/"); err != nil || st != http.StatusOK {
			t.Fatalf("idle connection %d after the eviction: %d, %v", i+1, st, err)
		}
	}
	closeAll(t, cl, append(idle, fifth))

	// Slow headers: four connections that sent part of their headers are idle for the cap.
	slow := sendFrom(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", "127.0.0.5", "127.0.0.5", "127.0.0.6", "127.0.0.6")
	waitStats(t, cl, "four slow headers", func(s connlimit.Stats) bool { return s.Open == 4 })
	late := admitEvicting(t, addr, "127.0.0.7", "four connections sent slow headers", slow[0], "the oldest slow-header connection")
	closeAll(t, cl, append(slow, late))

	// Busy: four requests in their handlers hold the cap; a new client is refused at once and
	// none of the four is closed.
	busy := sendFrom(t, addr, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n", "127.0.0.8", "127.0.0.8", "127.0.0.9", "127.0.0.9")
	for range busy {
		<-entered
	}
	if _, err := testutil.DialKeepAlive(t, "127.0.0.10", addr).Get("/"); err == nil {
		t.Fatal("a new client was served while every connection at the cap served a request")
	}
	if s := cl.Stats(); s.Open != 4 || s.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v, want the four busy open and one refusal", s)
	}
	close(release)
	for i, k := range busy {
		resp, err := http.ReadResponse(k.Reader, nil)
		if err != nil {
			t.Fatalf("busy connection %d lost its answer: %v", i, err)
		}
		resp.Body.Close()
	}
}

// TestEvictedRequestDoesNotRun: a request whose connection was closed to admit another client
// (after its headers were read, before it turned active) is dropped: its handler never runs.
func TestEvictedRequestDoesNotRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := connlimit.Wrap(ln, connlimit.Limits{MaxConns: 1, EvictIdle: true}, nil)
	defer cl.Close()
	accept := func() *connlimit.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		a, err := cl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return a.(*connlimit.Conn)
	}
	first := accept()
	first.Idle()
	second := accept() // admitted in place of the first
	defer second.Close()
	if s := cl.Stats(); s.EvictedMaxConns != 1 {
		t.Fatalf("stats %+v, want the first connection closed for the second", s)
	}

	ran := false
	d := &deadlines{next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }), lim: Defaults()}
	serve := func(c *connlimit.Conn) (aborted bool) {
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); !ok || !errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				aborted = true
			}
		}()
		r := httptest.NewRequest(http.MethodPost, "/api/vod/remove", nil)
		d.ServeHTTP(httptest.NewRecorder(), r.WithContext(withConn(r.Context(), c)))
		return false
	}
	if !serve(first) || ran {
		t.Fatal("a request on a connection closed for another client ran its handler")
	}
	if serve(second) || !ran {
		t.Fatal("a request on an open connection did not run its handler")
	}
}
