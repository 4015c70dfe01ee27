package console

import (
	"net/http"
	"strconv"
	"strings"
)

// Content-Security-Policy of the console page. No inline script or style anywhere: scripts
// and styles come from the server's own origin. The console talks only to its own origin
// (the API), frames only its own origin (the preview is the watch page at /hls/<id>/ on the
// API port, not on the player's port), plays recordings from blob: URLs (a download fetched
// with the token in a header), and may not be framed itself.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"media-src 'self' blob:; connect-src 'self'; frame-src 'self'; worker-src 'self'; font-src 'self'; " +
	"manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Content-Security-Policy of a watch page. The page and its playlists share an origin (the
// player's port, or the API port under /hls/<id>/), so connect-src 'self' covers them. hls.js
// and dash.js feed the video element through MediaSource (a blob: URL); hls.js runs its
// worker from our file (workerPath), not from a blob. Any site may embed the page in an iframe:
// that is what the iframe snippet is for.
const watchCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self' blob:; connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors *"

// Cache-Control values: versioned assets never change; pages are revalidated on each load.
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cachePage      = "no-cache"
)

// pageHeaders sets the headers every page (console or watch) carries.
func pageHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", cachePage)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// plain answers a short text error.
func plain(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// onlyGet answers 405 to anything but GET and HEAD, and reports whether it did.
func onlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	w.Header().Set("Allow", "GET, HEAD")
	plain(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+"\n")
	return true
}

// Handler serves the console: its page at / (and /index.html) and the assets under
// /assets/<version>/.
func (s *Site) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onlyGet(w, r) {
			return
		}
		switch {
		case r.URL.Path == "/" || r.URL.Path == "/index.html":
			s.serveIndex(w, r)
		case strings.HasPrefix(r.URL.Path, AssetPrefix):
			s.serveAsset(w, r)
		default:
			plain(w, http.StatusNotFound, "no console page at "+r.URL.Path+"\n")
		}
	})
}

// Assets serves the assets alone (a player's port, for its watch page).
func (s *Site) Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onlyGet(w, r) {
			return
		}
		s.serveAsset(w, r)
	})
}

func (s *Site) serveIndex(w http.ResponseWriter, r *http.Request) {
	if !s.built {
		plain(w, http.StatusServiceUnavailable, NotBuilt)
		return
	}
	pageHeaders(w, consoleCSP)
	w.Header().Set("Content-Length", strconv.Itoa(len(s.index)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(s.index)
	}
}

func (s *Site) serveAsset(w http.ResponseWriter, r *http.Request) {
	a := s.lookup(r.URL.Path)
	if a == nil {
		if !s.built && strings.Contains(r.URL.Path, "/vendor/") {
			plain(w, http.StatusServiceUnavailable, NotBuilt)
			return
		}
		plain(w, http.StatusNotFound, "no asset at "+r.URL.Path+" (this server's assets are under "+s.assetBase()+"/)\n")
		return
	}
	a.serve(w, r, cacheImmutable)
}
