package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/storage"
)

// Playback through any node (issue 17): a request on the main port for a player this node does
// not run answers from the node that runs it (player.Router.SetElsewhere), by a redirect or a
// proxy (--cluster-playback, cluster.Forwarder), so one load balancer or DNS name can front the
// cluster. Downloads of recorded files and memory recordings do the same (Forward).
const (
	// servingTTL is how long a looked-up owner is reused: a player's requests (a playlist
	// reload a part or a segment apart) cost the database one query a second at most, and a
	// moved player is found within a second.
	servingTTL = time.Second
	// servingCap bounds the owners remembered; past it the memory is cleared.
	servingCap = 4096
	// servingLookups bounds the owner queries a node makes a second, whatever clients ask: a
	// request for an id that is not a record id costs none, and one for a made-up record id a
	// query at most (not remembered: answered 404) up to this many a second, then none. A
	// cluster's own players are remembered a second each, so this allows 200 players running
	// on other nodes to be watched through this node.
	servingLookups = 200
)

// servingCache remembers which base URL serves each player id.
type servingCache struct {
	mu   sync.Mutex
	seen map[string]servingEntry
	// second and looked count the owner queries of the current second (servingLookups).
	second int64
	looked int
}

// lookup tells whether one more owner query fits in this second's servingLookups, and counts it.
// The caller holds mu.
func (s *servingCache) lookup(now time.Time) bool {
	if sec := now.Unix(); sec != s.second {
		s.second, s.looked = sec, 0
	}
	if s.looked >= servingLookups {
		return false
	}
	s.looked++
	return true
}

type servingEntry struct {
	base string // "" when no other node serves it
	at   time.Time
}

// elsewhere is the base URL of the other node that runs player id, for the router's redirect.
func (c *clusterNode) elsewhere(ctx context.Context, id string) (string, bool) {
	if !storage.ValidID(id) {
		return "", false
	}
	now := time.Now()
	c.serving.mu.Lock()
	if e, ok := c.serving.seen[id]; ok && now.Sub(e.at) < servingTTL {
		c.serving.mu.Unlock()
		return e.base, e.base != ""
	}
	if !c.serving.lookup(now) {
		c.serving.mu.Unlock()
		return "", false
	}
	c.serving.mu.Unlock()

	base := ""
	s, ok, err := c.node.ServingNode(ctx, id)
	switch {
	case err != nil:
		c.log.Debug("cluster: playback redirect: owner unknown", "id", id, "error", err)
	case ok && s.Node != c.node.ID() && s.PublicURL != "":
		base = strings.TrimRight(s.PublicURL, "/")
	}
	c.serving.mu.Lock()
	if c.serving.seen == nil || len(c.serving.seen) >= servingCap {
		c.serving.seen = map[string]servingEntry{}
	}
	c.serving.seen[id] = servingEntry{base: base, at: now}
	c.serving.mu.Unlock()
	return base, base != ""
}

// Forward implements api.Cluster: a download of what node holds, when node is another one.
// Only the API's authenticated download routes call it, so the node lookup it costs is not
// rate-limited like the playback one.
func (c *clusterNode) Forward(w http.ResponseWriter, r *http.Request, node string) (bool, error) {
	if node == "" || node == c.node.ID() {
		return false, nil
	}
	u, ok, err := c.node.NodeURL(r.Context(), node)
	if err != nil {
		return true, err
	}
	if !ok || !u.Live || u.API == "" {
		return true, fmt.Errorf("node %s, which holds it, is not running or has no URL (--cluster-api-url): %w", node, api.ErrNotAvailable)
	}
	c.fwd.Forward(w, r, u.API)
	return true, nil
}
