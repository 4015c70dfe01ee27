package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// Ways a node answers a request for what another node holds (--cluster-playback): a player's
// files and watch page, and recording downloads.
const (
	// ForwardRedirect answers 307 to the same path on the other node (the default).
	ForwardRedirect = "redirect"
	// ForwardProxy fetches the answer from the other node and passes it on.
	ForwardProxy = "proxy"
)

// ForwardedHeader marks a request one node proxied to another. The node it reaches never
// forwards it again: when two nodes disagree for a moment on who holds a record (a lease
// moving), the request ends at the second node instead of bouncing between them.
const ForwardedHeader = "X-Sluice-Forwarded"

// Proxy limits.
const (
	// MaxProxied caps the requests a node proxies at once; one more is answered 503 with
	// Retry-After at once.
	MaxProxied = 512
	// proxyDial bounds connecting to the other node.
	proxyDial = 5 * time.Second
	// proxyHeaders bounds the wait for the other node's response headers. It is long because a
	// blocking playlist reload (_HLS_msn) or a low-latency part waits, by design, up to three
	// segments before its answer starts.
	proxyHeaders = 100 * time.Second
	// proxyIdle is how long an idle connection to another node is kept.
	proxyIdle = 90 * time.Second
	// proxyHeaderBytes caps the response headers read from another node (net/http's default
	// is 10 MiB). A node's answers carry a few hundred bytes of headers.
	proxyHeaderBytes = 64 << 10
)

// ErrorWriter answers an error with the API's error body: status, code (the API's error
// code) and message.
type ErrorWriter func(w http.ResponseWriter, status int, code, message string)

// Forwarder answers requests for what another node holds, by redirect or by proxy.
type Forwarder struct {
	fail  ErrorWriter
	proxy bool
	sem   chan struct{}
	rp    *httputil.ReverseProxy
	log   *slog.Logger
}

// targetKey carries a proxied request's target in its context.
type targetKey struct{}

// NewForwarder returns a Forwarder in mode (ForwardRedirect or ForwardProxy; anything else is
// an error) that answers its own errors through fail (nil: a plain-text body).
func NewForwarder(mode string, fail ErrorWriter, log *slog.Logger) (*Forwarder, error) {
	if fail == nil {
		fail = func(w http.ResponseWriter, status int, _, message string) { http.Error(w, message, status) }
	}
	f := &Forwarder{fail: fail, log: log}
	switch mode {
	case ForwardRedirect, "":
		return f, nil
	case ForwardProxy:
	default:
		return nil, fmt.Errorf("cluster: forwarding mode %q is neither %s nor %s", mode, ForwardRedirect, ForwardProxy)
	}
	f.proxy = true
	f.sem = make(chan struct{}, MaxProxied)
	f.rp = &httputil.ReverseProxy{
		// Rewrite (not Director): the outgoing request starts without the client's
		// hop-by-hop and X-Forwarded-* headers, so a client cannot pass any of them on.
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(targetKey{}).(*url.URL))
			// The viewer's host stays: what the other node writes into its answers (the
			// DASH clock URL) points back at this node.
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set(ForwardedHeader, "1")
		},
		Transport: &http.Transport{
			DialContext:            (&net.Dialer{Timeout: proxyDial, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:    proxyDial,
			ResponseHeaderTimeout:  proxyHeaders,
			IdleConnTimeout:        proxyIdle,
			MaxIdleConnsPerHost:    64,
			MaxResponseHeaderBytes: proxyHeaderBytes,
		},
		// Every write is passed on at once: a low-latency part or a DASH segment streamed as
		// it is made reaches the viewer as the other node writes it.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			f.log.Warn("cluster: proxying to another node failed", "path", r.URL.Path, "error", err)
			f.fail(w, http.StatusBadGateway, "BAD_GATEWAY", "the node that holds this could not be reached")
		},
	}
	return f, nil
}

// Proxying tells whether f proxies (rather than redirects).
func (f *Forwarder) Proxying() bool { return f.proxy }

// Forwarded tells whether r was proxied here by another node.
func Forwarded(r *http.Request) bool { return r.Header.Get(ForwardedHeader) != "" }

// Forward answers a GET or HEAD r from the node at base (scheme://host[:port]): a 307 to the
// same path and query there, never cached (who holds a record changes at failover), or, when
// proxying, that node's answer, headers and all (headers set on w before are dropped). A
// request another node proxied here is not forwarded again: it is answered 404.
func (f *Forwarder) Forward(w http.ResponseWriter, r *http.Request, base string) {
	if Forwarded(r) {
		f.fail(w, http.StatusNotFound, "NOT_FOUND", "not held by the node this request was forwarded to")
		return
	}
	base = strings.TrimRight(base, "/")
	if !f.proxy {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	}
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	target, err := url.Parse(base)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		f.log.Warn("cluster: another node's URL is unusable", "url", base, "error", err)
		f.fail(w, http.StatusBadGateway, "BAD_GATEWAY", "the node that holds this has no usable URL")
		return
	}
	if r.Header.Get("Upgrade") != "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		f.fail(w, http.StatusBadRequest, "BAD_REQUEST", "only plain GET and HEAD requests are forwarded to another node")
		return
	}
	select {
	case f.sem <- struct{}{}:
		defer func() { <-f.sem }()
	default:
		h.Set("Retry-After", "1")
		f.fail(w, http.StatusServiceUnavailable, "UNAVAILABLE", fmt.Sprintf("too many requests forwarded to other nodes (at most %d at once)", MaxProxied))
		return
	}
	f.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, target)))
}
