package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// serveLimited serves h with lim on a loopback port until the test ends, and returns its
// address.
func serveLimited(t *testing.T, h http.Handler, lim Limits, upload func(*http.Request) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, lim, upload, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// closedWithin reads from c until the server closes it, and returns how long that took.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", limit)
	}
	return time.Since(start)
}

// TestHTTPBodyTimeout: a body that stops coming is cut after Body; one that came whole lifts
// the deadline, so a handler that then works longer than Body keeps its context and answers.
func TestHTTPBodyTimeout(t *testing.T) {
	lim := Defaults()
	lim.Body = 500 * time.Millisecond
	var mu sync.Mutex
	var readErr error
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		mu.Lock()
		readErr = err
		mu.Unlock()
		if err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(3 * lim.Body):
			fmt.Fprint(w, "done")
		case <-r.Context().Done():
			t.Errorf("request context ended while the handler worked after its body: %v", context.Cause(r.Context()))
		}
	}), lim, nil)

	c := testutil.DialFrom(t, "127.0.0.1", addr)
	fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
	took := closedWithin(t, c, 10*time.Second)
	mu.Lock()
	var ne net.Error
	if !errors.As(readErr, &ne) || !ne.Timeout() {
		t.Errorf("handler's body read ended with %v, want a timeout", readErr)
	}
	mu.Unlock()
	if took < lim.Body-100*time.Millisecond {
		t.Errorf("slow body cut after %v, before the %v body timeout", took, lim.Body)
	}
	t.Logf("slow body cut after %v (body timeout %v)", took, lim.Body)

	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("whole"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "done" {
		t.Fatalf("long handler after a whole body: %d %q", resp.StatusCode, b)
	}
}

// TestHTTPIdleTimeout: a keep-alive connection that sends no second request is closed after
// Idle, not before; one that sends nothing at all is closed after Header.
func TestHTTPIdleTimeout(t *testing.T) {
	lim := Defaults()
	lim.Idle, lim.Header = time.Second, 700*time.Millisecond
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}), lim, nil)

	c := testutil.DialFrom(t, "127.0.0.1", addr)
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(10 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("server sent bytes on an idle connection")
	}
	took := time.Since(start)
	if took < lim.Idle-100*time.Millisecond || took > lim.Idle+5*time.Second {
		t.Errorf("idle keep-alive closed after %v, want about %v", took, lim.Idle)
	}
	t.Logf("idle keep-alive closed after %v (idle timeout %v)", took, lim.Idle)

	silent := testutil.DialFrom(t, "127.0.0.1", addr)
	if took := closedWithin(t, silent, 10*time.Second); took < lim.Header-100*time.Millisecond {
		t.Errorf("silent connection closed after %v, before the %v header timeout", took, lim.Header)
	}
}

// TestHTTPWriteStall: a download to a client that reads nothing ends after WriteStall; one to
// a client that reads slowly but steadily completes, however long it takes in all.
func TestHTTPWriteStall(t *testing.T) {
	lim := Defaults()
	lim.WriteStall = 2 * time.Second
	const size = 8 << 20
	block := bytes.Repeat([]byte("sluice!\n"), size/8)
	ended := make(chan error, 4)
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", fmt.Sprint(8*size))
			for range 8 {
				if _, err := w.Write(block); err != nil {
					ended <- err
					return
				}
			}
			ended <- nil
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		_, err := w.Write(block)
		ended <- err
	}), lim, nil)

	// A client that never reads: the server's write fails once it stalled for WriteStall.
	stuck := testutil.DialFrom(t, "127.0.0.1", addr)
	_ = stuck.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprint(stuck, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	start := time.Now()
	select {
	case err := <-ended:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("download to a client that reads nothing ended with %v, want a write timeout", err)
		}
		t.Logf("download to a client that reads nothing ended after %v (write stall %v)", time.Since(start), lim.WriteStall)
	case <-time.After(lim.WriteStall + 20*time.Second):
		t.Fatal("download to a client that reads nothing still writing")
	}

	// A client that reads 64 KiB every 40 ms (1.6 MB/s) takes about 5 s for 8 MiB, more than
	// twice WriteStall, and gets every byte.
	slow := testutil.DialFrom(t, "127.0.0.1", addr)
	fmt.Fprint(slow, "GET /steady HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReaderSize(slow, 64<<10), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start = time.Now()
	var got int
	buf := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			break
		}
		time.Sleep(40 * time.Millisecond)
	}
	took := time.Since(start)
	if err := <-ended; err != nil || got != size {
		t.Fatalf("steady slow download: %d of %d bytes, server write %v", got, size, err)
	}
	t.Logf("steady slow download: %d bytes in %v (write stall %v)", got, took, lim.WriteStall)
}

// TestHTTPWriteStallFile: a file served with ServeContent goes through ReadFrom in pieces and
// arrives whole, Range requests too.
func TestHTTPWriteStallFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bin")
	want := make([]byte, 3*writeChunk+12345)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, path)
	}), Defaults(), nil)
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, want) {
		t.Fatalf("file: %d bytes, want %d equal", len(got), len(want))
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", writeChunk-10, 2*writeChunk+10))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(got, want[writeChunk-10:2*writeChunk+11]) {
		t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(got))
	}
}

// TestHTTPStreamingUpload: an upload that keeps moving lives longer than Body; one that stops
// is cut after ReadStall.
func TestHTTPStreamingUpload(t *testing.T) {
	lim := Defaults()
	lim.Body, lim.ReadStall = 300*time.Millisecond, 600*time.Millisecond
	type result struct {
		n   int64
		err error
	}
	results := make(chan result, 2)
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		results <- result{n, err}
		fmt.Fprint(w, n)
	}), lim, func(*http.Request) bool { return true })

	pr, pw := io.Pipe()
	go func() {
		for range 15 { // 1.5 s in all, five times Body
			if _, err := pw.Write(make([]byte, 1000)); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	resp, err := http.Post("http://"+addr+"/", "application/octet-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := <-results; r.err != nil || r.n != 15000 {
		t.Fatalf("moving upload: %d bytes, %v", r.n, r.err)
	}

	c := testutil.DialFrom(t, "127.0.0.1", addr)
	fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nfirst bytes")
	start := time.Now()
	var r result
	select {
	case r = <-results:
	case <-time.After(lim.ReadStall + 20*time.Second):
		t.Fatal("stalled upload still read")
	}
	var ne net.Error
	if !errors.As(r.err, &ne) || !ne.Timeout() {
		t.Fatalf("stalled upload ended with %v, want a timeout", r.err)
	}
	if took := time.Since(start); took < lim.ReadStall-100*time.Millisecond {
		t.Errorf("stalled upload cut after %v, before the %v read stall", took, lim.ReadStall)
	}
}

// TestHTTPUploadUnreadBody: a request on an upload path whose handler answers without reading
// the body (a method the route does not take) is cut after ReadStall when the body stops:
// net/http reads what is left of an unread body (up to 256 KiB) before it answers, and a
// streaming upload had no deadline until its first read, so such a connection stayed busy
// (never evicted) for as long as its client liked.
func TestHTTPUploadUnreadBody(t *testing.T) {
	lim := Defaults()
	lim.Body, lim.ReadStall = 300*time.Millisecond, 600*time.Millisecond
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}), lim, func(*http.Request) bool { return true })
	for name, req := range map[string]string{
		"sized":   "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nfirst bytes",
		"chunked": "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n",
	} {
		c := testutil.DialFrom(t, "127.0.0.1", addr)
		fmt.Fprint(c, req)
		took := closedWithin(t, c, lim.ReadStall+10*time.Second)
		t.Logf("%s: closed after %v (read stall %v)", name, took, lim.ReadStall)
	}
}

// TestHTTPUploadTrickle: an upload that trickles a byte at a time, each read well within
// ReadStall, is cut after ReadStall like one that stopped: it held its busy connection for
// as long as it kept trickling.
func TestHTTPUploadTrickle(t *testing.T) {
	lim := Defaults()
	lim.Body, lim.ReadStall = 300*time.Millisecond, 600*time.Millisecond
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n, err)
	}), lim, func(*http.Request) bool { return true })
	c := testutil.DialFrom(t, "127.0.0.1", addr)
	fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	start := time.Now()
	go func() {
		for time.Since(start) < 20*time.Second {
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(lim.ReadStall / 3)
		}
	}()
	took := closedWithin(t, c, lim.ReadStall+10*time.Second)
	t.Logf("a byte every %v: cut after %v (read stall %v)", lim.ReadStall/3, took, lim.ReadStall)
}
