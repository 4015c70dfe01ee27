package cluster

import (
	"errors"
	"slices"
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
