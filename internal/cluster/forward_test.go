package cluster

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestForwardRedirect: 307 to the same path and query on the base, never cached.
func TestForwardRedirect(t *testing.T) {
	t.Parallel()
	f, err := NewForwarder(ForwardRedirect, nil, quietLg)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	f.Forward(rec, httptest.NewRequest(http.MethodGet, "/hls/a/a/index.m3u8?_HLS_msn=3", nil), "http://node-b:8080/")
	if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "http://node-b:8080/hls/a/a/index.m3u8?_HLS_msn=3" ||
		rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("redirect: %d %v", rec.Code, rec.Header())
	}
	if _, err := NewForwarder("tunnel", nil, quietLg); err == nil {
		t.Error("an unknown mode accepted")
	}
}

// TestForwardProxy: through a real loopback owner, the proxy passes the owner's answer on
// (status, headers, body) as it is written, drops the client's hop-by-hop and X-Forwarded
// headers, sets its own, marks the request forwarded, keeps the viewer's Host, does not forward
// a forwarded request again, refuses other methods and upgrades, and caps what it proxies.
func TestForwardProxy(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	seen := make(chan http.Header, 4)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		seen <- h
		w.Header().Set("Cache-Control", "public, max-age=1, s-maxage=1")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Connection", "X-Owner-Secret")
		w.Header().Set("X-Owner-Secret", "1")
		if r.URL.Query().Get("stream") == "" {
			_, _ = io.WriteString(w, "#EXTM3U\n")
			return
		}
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "second\n")
	}))
	defer owner.Close()
	f, err := NewForwarder(ForwardProxy, nil, quietLg)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*") // dropped: the owner's is passed on
		f.Forward(w, r, owner.URL)
	}))
	defer front.Close()

	req, _ := http.NewRequest(http.MethodGet, front.URL+"/hls/a/a/index.m3u8?x=1", nil)
	req.Host = "viewers.example"
	req.Header.Set("Connection", "X-Client-Secret")
	req.Header.Set("X-Client-Secret", "1")
	req.Header.Set("X-Forwarded-For", "6.6.6.6")
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("Range", "bytes=0-3")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || string(body) != "#EXTM3U\n" || res.Header.Get("Cache-Control") != "public, max-age=1, s-maxage=1" ||
		len(res.Header.Values("Access-Control-Allow-Origin")) != 1 || res.Header.Get("X-Owner-Secret") != "" {
		t.Errorf("proxied answer: %d %q %v", res.StatusCode, body, res.Header)
	}
	h := <-seen
	if h.Get("X-Client-Secret") != "" || h.Get("X-Forwarded-For") != "127.0.0.1" || h.Get("X-Forwarded-Host") != "viewers.example" ||
		h.Get("Host") != "viewers.example" || h.Get(ForwardedHeader) != "1" || h.Get("Range") != "bytes=0-3" {
		t.Errorf("the owner saw %v", h)
	}

	// Streamed: the first write arrives while the owner still holds the rest.
	stream, err := http.Get(front.URL + "/part?stream=1")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	<-seen
	got := make(chan string, 1)
	first := bufio.NewReader(stream.Body)
	go func() {
		l, _ := first.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		if l != "first\n" {
			t.Errorf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Error("the owner's first write did not come through while it held the rest")
	}
	close(release)

	// A forwarded request, another method or an upgrade: not forwarded.
	for _, tc := range []struct {
		method, header, value string
		want                  int
	}{
		{http.MethodGet, ForwardedHeader, "1", http.StatusNotFound},
		{http.MethodPost, "", "", http.StatusBadRequest},
		{http.MethodGet, "Upgrade", "websocket", http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(tc.method, front.URL+"/x", strings.NewReader(""))
		if tc.header != "" {
			req.Header.Set(tc.header, tc.value)
		}
		if tc.header == "Upgrade" {
			req.Header.Set("Connection", "Upgrade")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s %s=%s: %d, want %d", tc.method, tc.header, tc.value, res.StatusCode, tc.want)
		}
	}
	select {
	case h := <-seen:
		t.Errorf("a request that should not be forwarded reached the owner: %v", h)
	default:
	}

	// The cap: with every place taken, one more is 503 at once.
	for range MaxProxied {
		f.sem <- struct{}{}
	}
	over, err := http.Get(front.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer over.Body.Close()
	if over.StatusCode != http.StatusServiceUnavailable || over.Header.Get("Retry-After") != "1" {
		t.Errorf("over the cap: %d %v", over.StatusCode, over.Header)
	}
	for range MaxProxied {
		<-f.sem
	}
	// An owner that cannot be reached: 502.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	rec := httptest.NewRecorder()
	f.Forward(rec, httptest.NewRequest(http.MethodGet, "/x", nil), deadURL)
	if rec.Code != http.StatusBadGateway {
		t.Errorf("unreachable owner: %d", rec.Code)
	}
}

// TestForwardProxyHeaderCap: an owner whose answer's headers run past proxyHeaderBytes gets the
// viewer a 502, not a proxy holding megabytes of headers.
func TestForwardProxyHeaderCap(t *testing.T) {
	t.Parallel()
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 4 << 10
		if r.URL.Path == "/large" {
			n = proxyHeaderBytes
		}
		w.Header().Set("X-Filler", strings.Repeat("a", n))
		_, _ = io.WriteString(w, "ok")
	}))
	defer owner.Close()
	f, err := NewForwarder(ForwardProxy, nil, quietLg)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/small": http.StatusOK, "/large": http.StatusBadGateway} {
		rec := httptest.NewRecorder()
		f.Forward(rec, httptest.NewRequest(http.MethodGet, path, nil), owner.URL)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
	}
}
