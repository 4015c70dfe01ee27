package httpget

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var testOptions = Options{RequestTimeout: 5 * time.Second, RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond}

// sizeServer answers /declared/N with a Content-Length of N and 10 bytes, /chunked/N with N
// bytes and no length, /bigheader with 100 KiB of headers, /status/N with status N (counting
// the requests in hits), /whole with 0123456789 ignoring any Range, and /redirect with a
// redirect to /whole.
func sizeServer(t *testing.T, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, num, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		n, _ := strconv.Atoi(num)
		switch kind {
		case "declared":
			w.Header().Set("Content-Length", num)
			_, _ = w.Write(make([]byte, 10))
		case "chunked":
			for sent := 0; sent < n; sent += 1000 {
				_, _ = w.Write(make([]byte, min(1000, n-sent)))
				_ = http.NewResponseController(w).Flush()
			}
		case "bigheader":
			w.Header().Set("X-Big", strings.Repeat("x", 100<<10))
		case "status":
			hits.Add(1)
			w.WriteHeader(n)
		case "whole":
			_, _ = w.Write([]byte("0123456789"))
		case "redirect":
			http.Redirect(w, r, "/whole", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCaps: a body over its cap fails with ErrTooLarge, whether its length is declared or
// not, and is never retried; a body at the cap is read whole; headers are capped.
func TestCaps(t *testing.T) {
	srv := sizeServer(t, nil)
	ld := New(testOptions)
	defer ld.Close()
	for _, tc := range []struct {
		path  string
		limit int64
		size  int    // the body read, when no error
		err   string // part of the error
	}{
		{"/chunked/5000", 5000, 5000, ""},
		{"/chunked/5001", 5000, 0, "over the cap of 5000 bytes"},
		{"/declared/5001", 5000, 0, "declares 5001 bytes, over the cap of 5000 bytes"},
		{"/declared/67108865", 64 << 20, 0, "declares 67108865 bytes, over the cap of 67108864 bytes"},
		{"/chunked/4194305", 4 << 20, 0, "over the cap of 4194304 bytes"},
		{"/bigheader", 4 << 20, 0, "response headers exceeded"},
	} {
		f, err := ld.GetRetry(context.Background(), mustURL(t, srv.URL+tc.path), nil, tc.limit, time.Now(), nil)
		if tc.err == "" {
			if err != nil || len(f.Body) != tc.size {
				t.Errorf("%s: %d bytes, %v; want %d bytes", tc.path, len(f.Body), err, tc.size)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.path, err, tc.err)
		}
		if strings.Contains(tc.err, "cap") && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v does not wrap ErrTooLarge", tc.path, err)
		}
	}
}

// TestRangeAndRedirect: a server that ignores a Range gets the range cut out of its answer; a
// range past the end is an error; Get reports the URL after redirects.
func TestRangeAndRedirect(t *testing.T) {
	srv := sizeServer(t, nil)
	ld := New(testOptions)
	defer ld.Close()
	f, err := ld.Get(context.Background(), mustURL(t, srv.URL+"/redirect"), &Range{Start: 3, Length: 4}, 100)
	if err != nil || string(f.Body) != "3456" {
		t.Fatalf("range 4@3: %q, %v; want 3456", f.Body, err)
	}
	if f.Final.Path != "/whole" {
		t.Errorf("final URL %s, want the redirect's /whole", f.Final)
	}
	if _, err := ld.Get(context.Background(), mustURL(t, srv.URL+"/whole"), &Range{Start: 8, Length: 4}, 100); err == nil || !strings.Contains(err.Error(), "beyond 10 bytes") {
		t.Errorf("range 4@8 of 10 bytes: %v, want an error", err)
	}
}

// TestRetry: 503 and 404 are retried until the deadline (then ErrStalled, with the last
// answer), 403 is not; a caller that no longer wants the resource ends the retries with ErrGone.
func TestRetry(t *testing.T) {
	var hits atomic.Int64
	srv := sizeServer(t, &hits)
	ld := New(testOptions)
	defer ld.Close()
	for _, tc := range []struct {
		code  int
		retry bool
	}{{503, true}, {404, true}, {429, true}, {403, false}, {410, false}} {
		hits.Store(0)
		_, err := ld.GetRetry(context.Background(), mustURL(t, srv.URL+"/status/"+strconv.Itoa(tc.code)), nil, 100, time.Now().Add(200*time.Millisecond), nil)
		if !IsStatus(err, tc.code) {
			t.Errorf("%d: %v, want the answer's status", tc.code, err)
		}
		if got := errors.Is(err, ErrStalled); got != tc.retry || (hits.Load() > 1) != tc.retry {
			t.Errorf("%d: stalled %v after %d requests; want retries %v", tc.code, got, hits.Load(), tc.retry)
		}
	}
	hits.Store(0)
	asked := 0
	_, err := ld.GetRetry(context.Background(), mustURL(t, srv.URL+"/status/503"), nil, 100, time.Now().Add(5*time.Second),
		func(error) bool { asked++; return asked < 3 })
	if !errors.Is(err, ErrGone) || hits.Load() != 3 {
		t.Errorf("gone after %d requests: %v; want ErrGone after 3", hits.Load(), err)
	}
}

// TestMoved: reloads are to go where the permanent redirects (301, 308) that begin a chain
// lead; a temporary one (302, 303, 307) ends what counts, whatever follows it. Final is always
// where the body came from.
func TestMoved(t *testing.T) {
	// /hop/C1/C2/.../Cn: redirect with C1 to /hop/C2/.../Cn; /hop/ alone serves the body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/hop"), "/"), "/")
		if codes[0] == "" {
			_, _ = w.Write([]byte("body"))
			return
		}
		code, _ := strconv.Atoi(codes[0])
		http.Redirect(w, r, "/hop/"+strings.Join(codes[1:], "/"), code)
	}))
	defer srv.Close()
	ld := New(testOptions)
	defer ld.Close()
	for _, tc := range []struct{ path, moved string }{
		{"/hop/", "/hop/"},
		{"/hop/301", "/hop/"},
		{"/hop/308", "/hop/"},
		{"/hop/302", "/hop/302"},
		{"/hop/307", "/hop/307"},
		{"/hop/303", "/hop/303"},
		{"/hop/301/308", "/hop/"},
		{"/hop/301/302", "/hop/302"},
		{"/hop/301/302/301", "/hop/302/301"},
		{"/hop/307/301", "/hop/307/301"},
	} {
		f, err := ld.GetRetry(context.Background(), mustURL(t, srv.URL+tc.path), nil, 100, time.Now(), nil)
		if err != nil || string(f.Body) != "body" {
			t.Fatalf("%s: %q, %v", tc.path, f.Body, err)
		}
		if f.Final.Path != "/hop/" || f.Moved.Path != tc.moved {
			t.Errorf("%s: final %s, moved %s; want final /hop/, moved %s", tc.path, f.Final.Path, f.Moved.Path, tc.moved)
		}
	}
}
