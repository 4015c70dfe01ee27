package cluster

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"
)

// Three nodes race for the same 100 records, each trying every record: exactly one wins each.
func TestConcurrentAcquireHasOneWinner(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = time.Minute
	nodes := []*Node{join(t, url, "a", ttl, nil), join(t, url, "b", ttl, nil), join(t, url, "c", ttl, nil)}
	ids := records(t, st, 100)
	ctx := timeout(t)
	var mu sync.Mutex
	winners := map[string][]string{}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			order := rand.Perm(len(ids))
			for _, i := range order {
				_, err := n.Acquire(ctx, ids[i])
				if err != nil {
					if !errors.Is(err, ErrHeld) {
						t.Errorf("%s: %v", n.ID(), err)
					}
					continue
				}
				mu.Lock()
				winners[ids[i]] = append(winners[ids[i]], n.ID())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, id := range ids {
		if len(winners[id]) != 1 {
			t.Errorf("record %s won by %v; want exactly one node", id, winners[id])
		}
	}
	for _, n := range nodes {
		total += len(n.Held())
	}
	if total != len(ids) {
		t.Errorf("the nodes hold %d leases in all; want %d", total, len(ids))
	}
}

// grant is one successful Acquire: who, which generation, and when the call started and ended.
type grant struct {
	node       string
	gen        int64
	start, end time.Time
}

// Three nodes keep acquiring 12 records whose leases expire fast (no renewals): every lease goes
// from node to node many times. No generation is granted twice, and a record passes to another
// node only once the previous grant's lease expired: at no moment has a record two holders.
func TestTakeoversNeverOverlap(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	const ttl = 120 * time.Millisecond
	nodes := []*Node{join(t, url, "a", ttl, nil), join(t, url, "b", ttl, nil), join(t, url, "c", ttl, nil)}
	ids := records(t, st, 12)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	grants := map[string][]grant{}
	attempts := 0
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A node leaves alone for a TTL what it took (taking it again would extend it), so
			// that expired leases are raced for by all three.
			mine := map[string]time.Time{}
			// At least 1.5 s and 100 attempts a node (a loaded machine is slower), at most 10 s.
			begin := time.Now()
			for k := 0; k < 400 && time.Since(begin) < 10*time.Second; k++ {
				if k >= 100 && time.Since(begin) > 1500*time.Millisecond {
					break
				}
				id := ids[rand.IntN(len(ids))]
				if time.Since(mine[id]) < ttl {
					time.Sleep(time.Millisecond)
					k--
					continue
				}
				start := time.Now()
				g, err := n.Acquire(ctx, id)
				end := time.Now()
				mu.Lock()
				attempts++
				if err == nil {
					grants[id] = append(grants[id], grant{n.ID(), g, start, end})
					mine[id] = start
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, ErrHeld) {
					t.Errorf("%s: %v", n.ID(), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	moves := 0
	for id, gs := range grants {
		sort.Slice(gs, func(i, j int) bool { return gs[i].gen < gs[j].gen })
		for i := 1; i < len(gs); i++ {
			prev, cur := gs[i-1], gs[i]
			if cur.gen == prev.gen {
				t.Errorf("record %s: generation %d granted to %s and %s", id, cur.gen, prev.node, cur.node)
			}
			if cur.node == prev.node {
				continue
			}
			moves++
			// prev's lease ran to at least prev.start+ttl (the database's now() is not before
			// the call began); cur was granted after it expired, so before cur.end.
			if held := cur.end.Sub(prev.start); held < ttl-5*time.Millisecond {
				t.Errorf("record %s: %s took generation %d %v after %s's generation %d began; the TTL is %v",
					id, cur.node, cur.gen, held, prev.node, prev.gen, ttl)
			}
		}
	}
	t.Logf("%d attempts, %d takeovers by another node", attempts, moves)
	if attempts < 300 || moves < 10 {
		t.Errorf("%d attempts and %d takeovers: too few to prove anything", attempts, moves)
	}
	// Each record's newest grant is the only one whose renewal succeeds: the others are lost.
	for _, n := range nodes {
		if _, err := n.Renew(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for id, gs := range grants {
		newest := gs[len(gs)-1]
		for _, n := range nodes {
			if g, ok := n.Held()[id]; ok && (n.ID() != newest.node || g != newest.gen) {
				t.Errorf("record %s: %s renewed generation %d; the newest is %s's %d", id, n.ID(), g, newest.node, newest.gen)
			}
		}
	}
}
