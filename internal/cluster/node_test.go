package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// runNode runs n until t ends.
func runNode(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// lostChan is an Options change whose Lost sends to the channel returned.
func lostChan() (func(*Options), chan []string) {
	ch := make(chan []string, 16)
	return func(o *Options) { o.Lost = func(ids []string) { ch <- ids } }, ch
}

// Run renews: a lease another node cannot take while Run goes; once one was taken (a renewal
// that came late), Run reports it lost at its next renewal.
func TestRunRenewsAndReportsLost(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = 600 * time.Millisecond
	withLost, lost := lostChan()
	a := join(t, url, "a", ttl, withLost)
	b := join(t, url, "b", ttl, nil)
	ids := records(t, st, 2)
	acquireAll(t, a, ids)
	runNode(t, a)
	time.Sleep(3 * ttl)
	if o := orphanIDs(t, b); len(o) != 0 {
		t.Fatalf("orphans while a runs: %v", o)
	}
	if _, err := b.Acquire(timeout(t), ids[0]); !errors.Is(err, ErrHeld) {
		t.Fatalf("b took a lease a renews: %v", err)
	}
	select {
	case l := <-lost:
		t.Fatalf("a lost %v while renewing", l)
	default:
	}
	// a's renewal of ids[0] comes too late: the lease ends, b takes it.
	takeOver(t, b, ids[0])
	select {
	case l := <-lost:
		if !slices.Equal(l, ids[:1]) {
			t.Errorf("a lost %v; want %v", l, ids[:1])
		}
	case <-time.After(5 * ttl):
		t.Fatal("a did not report the lease b took")
	}
	if h := a.Held(); len(h) != 1 || h[ids[1]] == 0 {
		t.Errorf("a holds %v; want only %s", h, ids[1])
	}
}

// takeOver makes record's lease expire at once and has b acquire it, retrying while the
// holder's renewal wins the race (within 10 s).
func takeOver(t *testing.T, b *Node, record string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := b.db.ExecContext(timeout(t), `UPDATE leases SET expires = now() WHERE record_id = $1`, record); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Acquire(timeout(t), record); err == nil {
			return
		} else if !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// A node cut off from the database reports its leases lost before they expire, so it stops its
// records before another node can start them; once it reaches the database again it heartbeats
// and holds nothing.
func TestPartitionedNodeFencesItself(t *testing.T) {
	t.Parallel()
	dbURL, proxied, st, px := proxiedDatabase(t)
	const ttl = 1200 * time.Millisecond
	withLost, lost := lostChan()
	a := join(t, proxied, "a", ttl, withLost)
	b := join(t, dbURL, "b", ttl, nil)
	ids := records(t, st, 3)
	acquireAll(t, a, ids)
	runNode(t, a)
	time.Sleep(ttl)
	px.paused.Store(true)
	var got []string
	var at time.Time
	select {
	case got = <-lost:
		at = time.Now()
	case <-time.After(3 * ttl):
		t.Fatal("a, cut off, did not report its leases lost")
	}
	if !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
		t.Errorf("a reported %v lost; want all of %v", got, ids)
	}
	for _, id := range ids {
		if e := expiry(t, b, id); !at.Before(e) {
			t.Errorf("a gave up %s at %v, after its lease expired at %v", id, at.Format("15:04:05.000"), e.Format("15:04:05.000"))
		}
	}
	// b takes them over once they expire.
	for _, id := range ids {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(ttl / 10) {
			_, err := b.Acquire(timeout(t), id)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	px.paused.Store(false)
	// a comes back: it heartbeats again, holds nothing, and b keeps the leases.
	deadline := time.Now().Add(15 * time.Second)
	for {
		nodes, err := b.Nodes(timeout(t))
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(nodes, func(ni NodeInfo) bool { return ni.ID == "a" }); i >= 0 && nodes[i].Live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a did not heartbeat again after the partition: %+v", nodes)
		}
		time.Sleep(ttl / 4)
	}
	if h := a.Held(); len(h) != 0 {
		t.Errorf("a holds %v after the partition", h)
	}
	if l, err := b.Renew(timeout(t)); err != nil || len(l) != 0 {
		t.Errorf("b.Renew = %v, %v", l, err)
	}
}

func TestNodesAndLeave(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = 500 * time.Millisecond
	capa := capacityOf(Capacity{CPUs: 2, CPUBusy: 0.5, FFmpegMax: 6, FFmpeg: 1})
	a := join(t, url, "a", ttl, capa)
	b := join(t, url, "b", ttl, capa)
	c := join(t, url, "c", ttl, capa)
	ids := records(t, st, 3)
	for i, n := range []*Node{a, a, b} {
		if _, err := n.Acquire(timeout(t), ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := c.Nodes(timeout(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 {
		t.Fatalf("Nodes = %+v; want a, b, c", nodes)
	}
	for i, want := range []struct {
		id     string
		leases int
	}{{"a", 2}, {"b", 1}, {"c", 0}} {
		ni := nodes[i]
		if ni.ID != want.id || ni.Leases != want.leases || !ni.Live || ni.Draining ||
			ni.APIURL != "http://"+want.id+".test:8080" || ni.PublicURL != "http://"+want.id+".test" ||
			ni.Capacity != (Capacity{CPUs: 2, CPUBusy: 0.5, FFmpegMax: 6, FFmpeg: 1}) ||
			ni.Heartbeat.Before(ni.Started) || time.Since(ni.Heartbeat) > time.Minute {
			t.Errorf("node %d = %+v; want %s with %d leases, live", i, ni, want.id, want.leases)
		}
	}
	// Nobody heartbeats: after the TTL every node is shown not live, and the leases expired.
	time.Sleep(ttl + 100*time.Millisecond)
	nodes, err = c.Nodes(timeout(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, ni := range nodes {
		if ni.Live || ni.Leases != 0 {
			t.Errorf("after the TTL without heartbeats: %+v; want not live, no leases", ni)
		}
	}
	if where, err := c.Place(timeout(t), ids[0], ""); !errors.Is(err, ErrNoNode) {
		t.Errorf("Place with no live node = %q, %v", where, err)
	}
	if err := b.Heartbeat(timeout(t)); err != nil {
		t.Fatal(err)
	}
	if where, err := c.Place(timeout(t), ids[0], ""); err != nil || where != "b" {
		t.Errorf("Place with b live again = %q, %v; want b", where, err)
	}
	// Leave: a's leases go back at once (taken again first, as they expired) and its row goes.
	for _, id := range ids[:2] {
		if _, err := a.Acquire(timeout(t), id); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Leave(timeout(t)); err != nil {
		t.Fatal(err)
	}
	nodes, err = c.Nodes(timeout(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].ID != "b" {
		t.Errorf("after a left: %+v", nodes)
	}
	if o := orphanIDs(t, c); !o[ids[0]] || !o[ids[1]] {
		t.Errorf("orphans after a left: %v; want a's two records", o)
	}
	if g, err := c.Acquire(timeout(t), ids[0]); err != nil || g != 3 {
		t.Errorf("c took a's former record: generation %d, %v; want 3", g, err)
	}
	// A heartbeat brings a missing row back; a registration (a restart) ends draining.
	if err := a.Heartbeat(timeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(timeout(t), "a"); err != nil {
		t.Fatalf("Drain of a after its heartbeat: %v", err)
	}
	again := join(t, url, "a", ttl, nil)
	if err := again.Heartbeat(timeout(t)); err != nil || again.Draining() {
		t.Errorf("a registered again: draining %v, %v; want not draining", again.Draining(), err)
	}
}

func TestOpenChecks(t *testing.T) {
	t.Parallel()
	url, _ := database(t)
	ctx := timeout(t)
	for _, o := range []Options{
		{LeaseTTL: time.Second, Renew: time.Second},
		{Renew: -time.Second},
		{ID: strings.Repeat("x", 101)},
		{ID: "node one"}, // notifications name nodes in words apart
		{ID: "node\x00"},
		{APIURL: strings.Repeat("x", 2001)},
	} {
		if n, err := Open(ctx, url, o); err == nil || !strings.Contains(err.Error(), "cluster node options") {
			t.Errorf("Open with %+v: %v; want an options error", o, err)
			if n != nil {
				_ = n.Close()
			}
		}
	}
	// A database the store did not migrate has no nodes table.
	bare := pg.NewDatabase(t)
	if n, err := Open(ctx, bare, Options{Log: quietLg}); err == nil || !strings.Contains(err.Error(), "open the store first") {
		t.Errorf("Open on an empty database: %v", err)
		if n != nil {
			_ = n.Close()
		}
	}
	// The default id is the host name and a suffix, new at each Open.
	n1 := join(t, url, "", time.Minute, nil)
	n2 := join(t, url, "", time.Minute, nil)
	if n1.ID() == "" || n1.ID() == n2.ID() {
		t.Errorf("default ids %q and %q", n1.ID(), n2.ID())
	}
}
