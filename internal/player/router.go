package player

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/sluicemedia/sluice/packager/segment"
)

// Router routes /hls/<id>/<id>/<file> and the watch page /hls/<id>/ on the main port to the
// running player with that id.
type Router struct {
	mu      sync.RWMutex
	players map[string]http.Handler
	// elsewhere, when set, gives the base URL (scheme://host[:port]) of the cluster node that
	// serves a player this router does not have (SetElsewhere).
	elsewhere func(ctx context.Context, id string) (string, bool)
	// forward answers a request from another node's base URL (SetElsewhere).
	forward func(w http.ResponseWriter, r *http.Request, base string)
}

// SetElsewhere makes a request for a player that runs on another node of a cluster answer from
// that node's base URL, which f gives; f answers false when no other node serves the player.
// forward answers the request from the base URL (a redirect or a proxy, cluster.Forwarder); nil
// answers a redirect (307) to the same path there, never cached. Call it before serving.
func (rt *Router) SetElsewhere(f func(ctx context.Context, id string) (string, bool), forward func(w http.ResponseWriter, r *http.Request, base string)) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.elsewhere, rt.forward = f, forward
}

// NewRouter returns a router with no player.
func NewRouter() *Router {
	return &Router{players: map[string]http.Handler{}}
}

// Set routes id to h; a nil h removes id.
func (rt *Router) Set(id string, h http.Handler) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if h == nil {
		delete(rt.players, id)
		return
	}
	rt.players[id] = h
}

// ServeHTTP serves a running player's files, or a JSON 404.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/hls/"), "/")
	rt.mu.RLock()
	h, elsewhere, forward := rt.players[parts[0]], rt.elsewhere, rt.forward
	rt.mu.RUnlock()
	if h == nil && elsewhere != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		if base, ok := elsewhere(r.Context(), parts[0]); ok {
			// A player library fetching from another origin follows a redirect only when the
			// redirect itself allows the origin (a proxy passes the owner's headers instead).
			segment.SetCORS(w.Header())
			if forward != nil {
				forward(w, r, base)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
	}
	if h == nil {
		segment.NotFound(w, "no running player serves "+r.URL.Path)
		return
	}
	h.ServeHTTP(w, r)
}
