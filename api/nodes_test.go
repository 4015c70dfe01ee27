package api

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

// TestNodesSingle: on a single node the nodes routes answer 503 (after the token and the body
// are checked) and records show no node field.
func TestNodesSingle(t *testing.T) {
	e := newEnv(t)
	wantErr(t, e.do(http.MethodGet, "/api/nodes/getAll", nil), http.StatusServiceUnavailable, CodeUnavailable, "")
	wantErr(t, e.do(http.MethodGet, "/api/nodes/getAll", nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, e.post("/api/nodes/drain", map[string]any{"id": "a"}), http.StatusServiceUnavailable, CodeUnavailable, "")
	wantErr(t, e.post("/api/nodes/drain", map[string]any{"id": 5}), http.StatusBadRequest, CodeValidation, "id")
	wantErr(t, e.post("/api/nodes/resume", map[string]any{"id": "a"}), http.StatusServiceUnavailable, CodeUnavailable, "")
	wantErr(t, e.do(http.MethodDelete, "/api/nodes/remove", map[string]any{"id": "a"}), http.StatusServiceUnavailable, CodeUnavailable, "")
	wantErr(t, e.do(http.MethodDelete, "/api/nodes/remove", map[string]any{"id": ""}), http.StatusBadRequest, CodeValidation, "id")
	id := e.mustCreate("restream", restreamBody("one"))
	if _, ok := e.getByID("restream", id)["node"]; ok {
		t.Error("a single node's record shows a node field")
	}
}

// clusterOf is a Cluster over a fixed owner map, to check the API's side of it (the real one is
// tested in internal/app's TestClusterThreeNodes).
type clusterOf struct {
	mu      sync.Mutex
	owners  map[string]string
	drained []string
	resumed []string
	removed []string
}

func (c *clusterOf) Owner(_ context.Context, _ storage.Module, id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owners[id]
}

func (c *clusterOf) Nodes(context.Context) (any, error) {
	return []map[string]any{{"id": "a", "leases": 1}}, nil
}

func (c *clusterOf) Forward(http.ResponseWriter, *http.Request, string) (bool, error) {
	return false, nil
}

func (c *clusterOf) Drain(_ context.Context, id string) error  { return c.mark(&c.drained, id) }
func (c *clusterOf) Resume(_ context.Context, id string) error { return c.mark(&c.resumed, id) }

// mark adds id to list when it is the known node "a".
func (c *clusterOf) mark(list *[]string, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id != "a" {
		return fmt.Errorf("node %q: %w", id, storage.ErrNotFound)
	}
	*list = append(*list, id)
	return nil
}

// Remove retires "b" (down, with 2 files and 1 queued removal); "a" heartbeats.
func (c *clusterOf) Remove(_ context.Context, id string) (int, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch id {
	case "a":
		return 0, 0, fmt.Errorf("node %q heartbeat within the last 10s: %w", id, storage.ErrNodeRunning)
	case "b":
		c.removed = append(c.removed, id)
		return 2, 1, nil
	}
	return 0, 0, fmt.Errorf("node %q: %w", id, storage.ErrNotFound)
}

// TestNodesCluster: with a cluster, getById and getAll show each record's node (empty for a
// record nobody runs and for webhooks), getAll lists the nodes, and drain names a known node.
func TestNodesCluster(t *testing.T) {
	cl := &clusterOf{owners: map[string]string{}}
	e := newEnv(t, func(c *Config) { c.Cluster = cl })
	run := e.mustCreate("restream", restreamBody("run"))
	idle := e.mustCreate("restream", restreamBody("idle"))
	cl.mu.Lock()
	cl.owners[run] = "a"
	cl.mu.Unlock()
	if n := e.getByID("restream", run)["node"]; n != "a" {
		t.Errorf("getById node %v, want a", n)
	}
	if n, ok := e.getByID("restream", idle)["node"]; !ok || n != "" {
		t.Errorf("getById of a record nobody runs: node %v (%v), want empty", n, ok)
	}
	for _, r := range e.post("/api/restream/getAll", map[string]any{}).arr() {
		doc := r.(map[string]any)
		if want := map[string]string{run: "a", idle: ""}[doc["id"].(string)]; doc["node"] != want {
			t.Errorf("getAll: %v node %v, want %q", doc["id"], doc["node"], want)
		}
	}
	// A filter on node runs on the rendered records; echoing node back in an update is no
	// unknown field.
	if got := e.post("/api/restream/getAll", map[string]any{"filter": map[string]any{"node": "a"}}).arr(); len(got) != 1 ||
		got[0].(map[string]any)["id"] != run {
		t.Errorf("getAll filtered on node a: %v, want %s", got, run)
	}
	if r := e.post("/api/restream/getCount", map[string]any{"filter": map[string]any{"node": ""}}); r.code != http.StatusOK ||
		r.obj()["count"] != float64(1) {
		t.Errorf("getCount of the records nobody runs: %d %s", r.code, r.raw)
	}
	if r := e.post("/api/restream/update", map[string]any{"id": run, "node": "a"}); r.code != http.StatusOK {
		t.Errorf("update echoing node: %d %s", r.code, r.raw)
	}
	nodes := e.do(http.MethodGet, "/api/nodes/getAll", nil)
	if nodes.code != http.StatusOK || len(nodes.arr()) != 1 {
		t.Errorf("nodes getAll: %d %s", nodes.code, nodes.raw)
	}
	if r := e.post("/api/nodes/drain", map[string]any{"id": "a"}); r.code != http.StatusOK {
		t.Errorf("drain a: %d %s", r.code, r.raw)
	}
	wantErr(t, e.post("/api/nodes/drain", map[string]any{"id": "zz"}), http.StatusNotFound, CodeNotFound, "")
	if len(cl.drained) != 1 {
		t.Errorf("drained %v, want [a]", cl.drained)
	}
	if r := e.post("/api/nodes/resume", map[string]any{"id": "a"}); r.code != http.StatusOK {
		t.Errorf("resume a: %d %s", r.code, r.raw)
	}
	wantErr(t, e.post("/api/nodes/resume", map[string]any{"id": "zz"}), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.post("/api/nodes/resume", map[string]any{}), http.StatusBadRequest, CodeValidation, "id")
	if len(cl.resumed) != 1 {
		t.Errorf("resumed %v, want [a]", cl.resumed)
	}
	// remove: a node that heartbeats is a conflict, an unknown one not found; a node down
	// answers what went with it.
	wantErr(t, e.do(http.MethodDelete, "/api/nodes/remove", map[string]any{"id": "a"}), http.StatusConflict, CodeNodeRunning, "")
	wantErr(t, e.do(http.MethodDelete, "/api/nodes/remove", map[string]any{"id": "zz"}), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.post("/api/nodes/remove", map[string]any{"id": "b"}), http.StatusMethodNotAllowed, CodeMethodNotAllowed, "")
	r := e.do(http.MethodDelete, "/api/nodes/remove", map[string]any{"id": "b"})
	if got := r.obj(); r.code != http.StatusOK || got["success"] != true || got["files"] != float64(2) || got["queued_removals"] != float64(1) {
		t.Errorf("remove b: %d %s", r.code, r.raw)
	}
	if len(cl.removed) != 1 {
		t.Errorf("removed %v, want [b]", cl.removed)
	}
}
