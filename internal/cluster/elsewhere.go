package cluster

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Playback through any node (issue 17): a request on the main port for a player this node does
// not run answers from the node that runs it (player.Router.SetElsewhere), by a redirect or a
// proxy (--cluster-playback, Forwarder), so one load balancer or DNS name can front the
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

// Elsewhere is the base URL of the other node that runs player id, for the router's redirect.
func (c *Coordinator) Elsewhere(ctx context.Context, id string) (string, bool) {
	if !c.opts.ValidID(id) {
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
