package cluster

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestAcquireAndRenew(t *testing.T) {
	t.Parallel()
	a, b, ids := pair(t, 5*time.Second, 2, nil)
	ctx := timeout(t)

	if g, err := a.Acquire(ctx, ids[0]); err != nil || g != 1 {
		t.Fatalf("a.Acquire = %d, %v; want generation 1", g, err)
	}
	_, err := b.Acquire(ctx, ids[0])
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) || held.Node != "a" || held.Record != ids[0] {
		t.Fatalf("b.Acquire of a's live lease = %v; want a HeldError naming a", err)
	}
	before := expiry(t, a, ids[0])
	time.Sleep(20 * time.Millisecond)
	lost, err := a.Renew(ctx)
	if err != nil || len(lost) != 0 {
		t.Fatalf("a.Renew = %v, %v; want nothing lost", lost, err)
	}
	if after := expiry(t, a, ids[0]); !after.After(before) {
		t.Errorf("renewal moved the expiry from %v to %v", before, after)
	}
	// Taking again a lease it holds raises the generation; the renewal follows it.
	if g, err := a.Acquire(ctx, ids[0]); err != nil || g != 2 {
		t.Fatalf("a.Acquire again = %d, %v; want generation 2", g, err)
	}
	if lost, err := a.Renew(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("a.Renew after taking again = %v, %v", lost, err)
	}
	if g, err := b.Acquire(ctx, ids[1]); err != nil || g != 1 {
		t.Fatalf("b.Acquire of another record = %d, %v", g, err)
	}
	if h := a.Held(); len(h) != 1 || h[ids[0]] != 2 {
		t.Errorf("a holds %v", h)
	}
	if _, err := a.Acquire(ctx, "no-such-record"); !errors.Is(err, ErrUnknownRecord) {
		t.Errorf("Acquire of a missing record = %v; want ErrUnknownRecord", err)
	}
	if o := orphanIDs(t, a); len(o) != 0 {
		t.Errorf("orphans while both leases live: %v", o)
	}
}

// expiry reads a lease's expiry.
func expiry(t *testing.T, n *Node, record string) time.Time {
	t.Helper()
	var e time.Time
	if err := n.db.QueryRowContext(timeout(t), `SELECT expires FROM leases WHERE record_id = $1`, record).Scan(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

// A node that stops renewing loses its leases once they expire: they are orphans, another node
// takes them over with the next generation, and the late node's renewal reports them lost. A
// lease nobody took meanwhile is still the late node's.
func TestTakeoverFencesTheLateNode(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = 400 * time.Millisecond
	late := join(t, url, "late", ttl, nil)
	other := join(t, url, "other", ttl, nil)
	ids := records(t, st, 3)
	ctx := timeout(t)
	for _, id := range ids {
		if _, err := late.Acquire(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if o := orphanIDs(t, other); len(o) != 0 {
		t.Fatalf("orphans before the expiry: %v", o)
	}
	if _, err := other.Acquire(ctx, ids[0]); !errors.Is(err, ErrHeld) {
		t.Fatalf("takeover before the expiry: %v", err)
	}
	// late stops renewing: after the TTL its records are orphans.
	deadline := time.Now().Add(10 * time.Second)
	for o := orphanIDs(t, other); len(o) != len(ids); o = orphanIDs(t, other) {
		if time.Now().After(deadline) {
			t.Fatalf("orphans %v after the TTL; want all of %v", o, ids)
		}
		time.Sleep(ttl / 8)
	}
	for _, id := range ids[:2] {
		if g, err := other.Acquire(ctx, id); err != nil || g != 2 {
			t.Fatalf("takeover of %s = %d, %v; want generation 2", id, g, err)
		}
	}
	lost, err := late.Renew(ctx)
	if want := slices.Sorted(slices.Values(ids[:2])); err != nil || !slices.Equal(lost, want) {
		t.Fatalf("late.Renew = %v, %v; want lost %v", lost, err, want)
	}
	if h := late.Held(); len(h) != 1 || h[ids[2]] != 1 {
		t.Errorf("late holds %v; want only %s", h, ids[2])
	}
	if lost, err := other.Renew(ctx); err != nil || len(lost) != 0 {
		t.Errorf("other.Renew = %v, %v", lost, err)
	}
	// The lost ones stay lost: late cannot take them back while other renews.
	if _, err := late.Acquire(ctx, ids[0]); !errors.Is(err, ErrHeld) {
		t.Errorf("late took back a live lease: %v", err)
	}
	if o := orphanIDs(t, other); len(o) != 0 {
		t.Errorf("orphans after the takeover and renewals: %v", o)
	}
}

func TestReleaseHandsBackAtOnce(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	a := join(t, url, "a", time.Minute, nil)
	b := join(t, url, "b", time.Minute, nil)
	ids := records(t, st, 5)
	ctx := timeout(t)
	acquireAll(t, a, ids)
	if err := a.Release(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if o := orphanIDs(t, b); len(o) != 1 || !o[ids[0]] {
		t.Fatalf("orphans after one release: %v; want %s", o, ids[0])
	}
	if err := a.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if h := a.Held(); len(h) != 0 {
		t.Errorf("a still holds %v", h)
	}
	if o := orphanIDs(t, b); len(o) != len(ids) {
		t.Fatalf("orphans after ReleaseAll: %v; want all %d (the TTL is a minute)", o, len(ids))
	}
	for _, id := range ids {
		// The generation goes on from the released one.
		if g, err := b.Acquire(ctx, id); err != nil || g != 2 {
			t.Errorf("b.Acquire(%s) after the release = %d, %v; want generation 2", id, g, err)
		}
	}
	// Releasing what it no longer holds does nothing to the new holder.
	if err := a.Release(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if lost, err := b.Renew(ctx); err != nil || len(lost) != 0 {
		t.Errorf("b.Renew = %v, %v", lost, err)
	}
	// A record removed while held: its holder's renewal reports it lost.
	if err := st.Delete(ctx, storage.ModuleRestream, ids[1]); err != nil {
		t.Fatal(err)
	}
	if lost, err := b.Renew(ctx); err != nil || !slices.Equal(lost, []string{ids[1]}) {
		t.Errorf("b.Renew after the record's removal = %v, %v; want %s lost", lost, err, ids[1])
	}
}

// TestSlowAcquireFencesInTime: a lease whose Acquire took long (the statement waited on the
// database) counts from when that Acquire was sent, not from a renewal of the node's other
// leases sent meanwhile: the node's fencing deadline stays before the lease's expiry, so that a
// node cut off right after stops the record before another node may take it.
func TestSlowAcquireFencesInTime(t *testing.T) {
	t.Parallel()
	a, b, ids := pair(t, 2*time.Second, 2, nil)
	ctx := timeout(t)
	if _, err := a.Acquire(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	// The Acquire of ids[1] waits behind a lock on its record.
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT id FROM records WHERE id = $1 FOR UPDATE`, ids[1]); err != nil {
		t.Fatal(err)
	}
	acquired := make(chan error, 1)
	go func() {
		_, err := a.Acquire(ctx, ids[1])
		acquired <- err
	}()
	time.Sleep(a.opts.Renew * 3 / 2)
	// A renewal of ids[0] meanwhile.
	if lost, err := a.Renew(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("a.Renew = %v, %v", lost, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
	at, ok := a.fenceAt()
	if e := expiry(t, a, ids[1]); !ok || !at.Before(e) {
		t.Errorf("a would count %s lost at %v, after its lease expired at %v", ids[1],
			at.Format("15:04:05.000"), e.Format("15:04:05.000"))
	}
}

// slowProcs are processes whose stop takes a while (an ffmpeg child given its grace, then
// killed): Fence returns after stop.
type slowProcs struct {
	stop    time.Duration
	mu      sync.Mutex
	running map[string]bool
}

func (p *slowProcs) Running() []Ref {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Ref
	for id := range p.running {
		out = append(out, Ref{Module: "MODULE_RESTREAM", ID: id})
	}
	return out
}

func (p *slowProcs) runs(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running[id]
}

func (p *slowProcs) Runs(r Ref) bool { return p.runs(r.ID) }
func (p *slowProcs) Lock(context.Context, Ref) (func(), error) {
	return func() {}, nil
}
func (p *slowProcs) StartHere(context.Context, Ref) error { return nil }
func (p *slowProcs) Stop(context.Context, Ref) error      { return nil }
func (p *slowProcs) Restart(context.Context, Ref) error   { return nil }
func (p *slowProcs) Remove(context.Context, Ref) error    { return nil }
func (p *slowProcs) State(Ref) RecordState                { return RecordState{State: "running"} }

func (p *slowProcs) Fence(r Ref) {
	time.Sleep(p.stop)
	p.mu.Lock()
	delete(p.running, r.ID)
	p.mu.Unlock()
}

type noRecords struct{}

func (noRecords) Active(context.Context) ([]Ref, error) { return nil, nil }
func (noRecords) Lookup(context.Context, Ref) (bool, string, bool) {
	return true, "", true
}
func (noRecords) Rank(string) (int, bool) { return 0, true }

// TestSlowFenceKeepsOtherLeases: while a record whose lease was taken over stops (slowly, as
// an ffmpeg child given its grace does), the node keeps renewing the leases of its other
// records: no other node may take a record this node still runs.
func TestSlowFenceKeepsOtherLeases(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = 1200 * time.Millisecond
	procs := &slowProcs{stop: 3 * ttl, running: map[string]bool{}}
	c, err := OpenCoordinator(timeout(t), url, CoordinatorOptions{
		Node:  Options{ID: "a", LeaseTTL: ttl, Renew: ttl / 4, Log: quietLg},
		Procs: procs, Records: noRecords{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.node.Close() })
	b := join(t, url, "b", ttl, nil)
	ids := records(t, st, 2)
	acquireAll(t, c.node, ids)
	for _, id := range ids {
		procs.running[id] = true
	}
	runNode(t, c.node)
	// b takes ids[0] over (a's renewal came late); a fences it, which takes 3 TTLs.
	takeOver(t, b, ids[0])
	// Meanwhile ids[1] runs on a: b must not get its lease.
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 10) {
		_, err := b.Acquire(timeout(t), ids[1])
		if err == nil && procs.runs(ids[1]) {
			t.Fatalf("b took %s while a still runs it (a's renewals waited for the stop of %s)", ids[1], ids[0])
		}
		if err == nil {
			break // a fenced it first, at least
		}
		if !errors.Is(err, ErrHeld) {
			t.Fatal(err)
		}
	}
	if !procs.runs(ids[1]) {
		t.Errorf("a stopped %s, whose lease it still held", ids[1])
	}
}

// countingRecords counts the coordinator's rounds (each starts with Active).
type countingRecords struct {
	noRecords
	rounds atomic.Int64
}

func (r *countingRecords) Active(context.Context) ([]Ref, error) {
	r.rounds.Add(1)
	return nil, nil
}

// TestRoundsOutliveALostConnection: a statement of a round sent while the database could not
// be reached (a partition, a failover to another host: the packets go nowhere and nothing
// answers) does not hold the coordinator's rounds up for good: once the database answers again,
// orphans are placed and states written again within a few rounds.
func TestRoundsOutliveALostConnection(t *testing.T) {
	t.Parallel()
	_, proxied, _, px := proxiedDatabase(t)
	const ttl = 1200 * time.Millisecond
	recs := &countingRecords{}
	c, err := OpenCoordinator(timeout(t), proxied, CoordinatorOptions{
		Node:  Options{ID: "a", LeaseTTL: ttl, Renew: ttl / 4, Log: quietLg},
		Procs: &slowProcs{running: map[string]bool{}}, Records: recs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.node.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	time.Sleep(ttl)
	if recs.rounds.Load() == 0 {
		t.Fatal("no round ran")
	}
	px.paused.Store(true)
	time.Sleep(ttl)
	px.paused.Store(false)
	before := recs.rounds.Load()
	time.Sleep(4 * ttl)
	if after := recs.rounds.Load(); after < before+3 {
		t.Errorf("rounds: %d before the database answered again, %d %v later; want them going on", before, after, 4*ttl)
	}
}
