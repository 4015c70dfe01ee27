package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/sluicemedia/sluice/storage"
)

// Cluster is what the API needs of the cluster node when several sluice nodes share a
// PostgreSQL store (issue 17). With none (a single node) records show no node field and the
// nodes routes answer 503.
type Cluster interface {
	// Owner is the id of the node running a record (holding its live lease), or "".
	Owner(ctx context.Context, m storage.Module, id string) string
	// Nodes lists the registered nodes (a JSON array).
	Nodes(ctx context.Context) (any, error)
	// Drain marks a node draining: it hands its records back and takes none. An unknown id
	// wraps storage.ErrNotFound.
	Drain(ctx context.Context, id string) error
	// Resume ends node id's draining: it takes new records again. An unknown id wraps
	// storage.ErrNotFound.
	Resume(ctx context.Context, id string) error
	// Remove retires node id for good: it leaves the cluster with the entries of the files on
	// its disk and the removals queued for it (storage.Store.RetireNode), which it returns the
	// counts of. A node that heartbeats within the lease TTL wraps storage.ErrNodeRunning; an
	// unknown id wraps storage.ErrNotFound.
	Remove(ctx context.Context, id string) (files, queued int, err error)
	// Forward answers a download r from node, which holds what it asks for (a recorded file's
	// disk, a memory recording's process), by a redirect or a proxy (--cluster-playback), and
	// reports true; it reports false when node is "" or this node, which then answers r
	// itself. An error (node not running) is the answer instead.
	Forward(w http.ResponseWriter, r *http.Request, node string) (bool, error)
}

// maxNodeID bounds a node id in a request (cluster.Options.ID's limit).
const maxNodeID = 100

// errNoCluster answers the nodes routes on a single node.
var errNoCluster = fmt.Errorf("this server is a single node (start every node with a PostgreSQL --store for a cluster): %w", ErrNotAvailable)

// nodesGetAll lists the cluster's nodes.
func (s *server) nodesGetAll(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Cluster == nil {
		s.fail(w, r, errNoCluster)
		return
	}
	ns, err := s.cfg.Cluster.Nodes(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ns)
}

// nodesAct answers a nodes route that acts on the node {"id"} with act (drain, resume).
func (s *server) nodesAct(act func(c Cluster, ctx context.Context, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := s.nodeID(w, r)
		if !ok {
			return
		}
		if err := act(s.cfg.Cluster, r.Context(), id); err != nil {
			s.fail(w, r, err)
			return
		}
		writeSuccess(w)
	}
}

// nodesRemove retires the node {"id"}, down for good, with what the cluster keeps of it.
func (s *server) nodesRemove(w http.ResponseWriter, r *http.Request) {
	id, ok := s.nodeID(w, r)
	if !ok {
		return
	}
	files, queued, err := s.cfg.Cluster.Remove(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "files": files, "queued_removals": queued})
}

// nodeID reads the node id of a nodes route's body {"id"}; when it answers false, it has
// answered r (a bad body, or a single node).
func (s *server) nodeID(w http.ResponseWriter, r *http.Request) (string, bool) {
	body, err := readBody(r)
	if err != nil {
		s.fail(w, r, err)
		return "", false
	}
	id, ok := body["id"].(string)
	if !ok || id == "" || len(id) > maxNodeID {
		s.fail(w, r, errValidation("id", "want a node id, a string of 1 to %d bytes", maxNodeID))
		return "", false
	}
	if s.cfg.Cluster == nil {
		s.fail(w, r, errNoCluster)
		return "", false
	}
	return id, true
}

// nodeSchema is one node of /api/nodes/getAll.
func nodeSchema() map[string]any {
	str := map[string]any{"type": "string"}
	when := map[string]any{"type": "string", "format": "date-time"}
	return jsObject([]string{"id", "api_url", "public_url", "started", "heartbeat", "live", "draining", "leases", "capacity"}, map[string]any{
		"id": str, "api_url": str, "public_url": str, "started": when, "heartbeat": when,
		"live":     map[string]any{"type": "boolean", "description": "heartbeat within the lease TTL"},
		"draining": map[string]any{"type": "boolean"},
		"leases":   map[string]any{"type": "integer", "description": "live leases held: records the node runs"},
		"capacity": jsObject([]string{"cpus", "cpu_busy", "ffmpeg_max", "ffmpeg"}, map[string]any{
			"cpus":       map[string]any{"type": "number"},
			"cpu_busy":   map[string]any{"type": "number", "description": "share of the CPUs in use, 0 to 1"},
			"ffmpeg_max": map[string]any{"type": "integer", "description": "ffmpeg children at most; 0: no limit"},
			"ffmpeg":     map[string]any{"type": "integer", "description": "ffmpeg children now"},
		}),
	})
}
