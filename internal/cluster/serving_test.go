package cluster

import (
	"testing"
	"time"
)

// TestServingNode: the node serving a record is its live lease holder, with its public URL, or
// its API URL when it has none; a record with no live lease (none, released, expired) has none.
func TestServingNode(t *testing.T) {
	t.Parallel()
	a, b, ids := pair(t, 2*time.Second, 3, func(o *Options) { o.PublicURL = "" })
	ctx := timeout(t)
	if _, ok, err := a.ServingNode(ctx, ids[0]); ok || err != nil {
		t.Fatalf("a record with no lease is served by a node: %v, %v", ok, err)
	}
	acquireAll(t, a, ids[:1])
	acquireAll(t, b, ids[1:2])
	if s, ok, err := b.ServingNode(ctx, ids[0]); err != nil || !ok || s.Node != "a" || s.PublicURL != "http://a.test" {
		t.Errorf("record of a: %+v, %v, %v; want a at its public URL", s, ok, err)
	}
	if s, ok, err := a.ServingNode(ctx, ids[1]); err != nil || !ok || s.Node != "b" || s.PublicURL != "http://b.test:8080" {
		t.Errorf("record of b (no public URL): %+v, %v, %v; want b at its API URL", s, ok, err)
	}
	if err := b.Release(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if s, ok, err := a.ServingNode(ctx, ids[1]); ok || err != nil {
		t.Errorf("a released record is served by %+v (%v)", s, err)
	}
	if _, ok, _ := a.ServingNode(ctx, ids[2]); ok {
		t.Errorf("a record nobody took is served")
	}
}
