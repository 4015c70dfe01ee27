package player

import (
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
	h := rt.players[parts[0]]
	rt.mu.RUnlock()
	if h == nil {
		segment.NotFound(w, "no running player serves "+r.URL.Path)
		return
	}
	h.ServeHTTP(w, r)
}
