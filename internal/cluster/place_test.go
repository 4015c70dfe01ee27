package cluster

import (
	"errors"
	"math"
	"testing"
	"time"
)

// capacityOf returns an Options change that reports c.
func capacityOf(c Capacity) func(*Options) {
	return func(o *Options) { o.Capacity = func() Capacity { return c } }
}

// placeAll places and acquires each record on the node Place picks, and counts per node.
func placeAll(t *testing.T, nodes []*Node, ids []string, affinity string) map[string]int {
	t.Helper()
	byID := map[string]*Node{}
	for _, n := range nodes {
		byID[n.ID()] = n
	}
	count := map[string]int{}
	for _, id := range ids {
		// Any node may place; take turns.
		where, err := nodes[len(count)%len(nodes)].Place(timeout(t), id, affinity)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := byID[where].Acquire(timeout(t), id); err != nil {
			t.Fatal(err)
		}
		count[where]++
	}
	return count
}

func TestPlaceSpreadsEvenly(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	same := capacityOf(Capacity{CPUs: 4, CPUBusy: 0.1, FFmpegMax: 8})
	nodes := []*Node{join(t, url, "a", time.Minute, same), join(t, url, "b", time.Minute, same), join(t, url, "c", time.Minute, same)}
	count := placeAll(t, nodes, records(t, st, 12), "")
	for _, n := range nodes {
		if count[n.ID()] != 4 {
			t.Errorf("12 records on 3 equal nodes: %v; want 4 each", count)
			break
		}
	}
	// A record with a live lease stays where it is.
	held := records(t, st, 1)[0]
	if _, err := nodes[2].Acquire(timeout(t), held); err != nil {
		t.Fatal(err)
	}
	if where, err := nodes[0].Place(timeout(t), held, ""); err != nil || where != "c" {
		t.Errorf("Place of a record c holds = %q, %v; want c", where, err)
	}

	// A drained node gets nothing new, and learns it at its heartbeat.
	if err := nodes[0].Drain(timeout(t), "c"); err != nil {
		t.Fatal(err)
	}
	if err := nodes[2].Heartbeat(timeout(t)); err != nil || !nodes[2].Draining() {
		t.Errorf("c after its heartbeat: draining %v, %v", nodes[2].Draining(), err)
	}
	more := placeAll(t, nodes, records(t, st, 6), "")
	if more["c"] != 0 || more["a"] != 3 || more["b"] != 3 {
		t.Errorf("6 more records with c draining: %v; want 3 on a and b each", more)
	}
	if err := nodes[0].Drain(timeout(t), "nobody"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("Drain of an unknown node = %v", err)
	}
	if err := nodes[1].Resume(timeout(t), "c"); err != nil {
		t.Fatal(err)
	}
	// c holds 5 (4 and the one above), a and b 7: c gets the next two.
	back := placeAll(t, nodes, records(t, st, 2), "")
	if back["c"] != 2 {
		t.Errorf("2 records after c resumed: %v; want both on c, the emptiest", back)
	}
}

func TestPlaceByCapacity(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	big := join(t, url, "big", time.Minute, capacityOf(Capacity{CPUs: 8, FFmpegMax: 8}))
	s1 := join(t, url, "small1", time.Minute, capacityOf(Capacity{CPUs: 4, FFmpegMax: 4}))
	s2 := join(t, url, "small2", time.Minute, capacityOf(Capacity{CPUs: 4, FFmpegMax: 4, FFmpeg: 1}))
	nodes := []*Node{big, s1, s2}
	// small2 runs one ffmpeg child of its own (no lease); a node's children count as the larger
	// of those reported and its leases. 12 records leave a quarter free everywhere: big 6 of 8,
	// small1 and small2 3 of 4.
	count := placeAll(t, nodes, records(t, st, 12), "")
	if count["big"] != 6 || count["small1"] != 3 || count["small2"] != 3 {
		t.Errorf("12 records by capacity: %v; want big 6, small1 3, small2 3", count)
	}
	// Full: 4 more fill every node (big 8, small 4 each), the next has nowhere to go.
	placeAll(t, nodes, records(t, st, 4), "")
	if where, err := big.Place(timeout(t), records(t, st, 1)[0], ""); !errors.Is(err, ErrNoNode) {
		t.Errorf("Place on full nodes = %q, %v; want ErrNoNode", where, err)
	}
}

func TestPlaceBusyCPU(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	busy := join(t, url, "busy", time.Minute, capacityOf(Capacity{CPUs: 4, CPUBusy: 0.9, FFmpegMax: 10}))
	idle := join(t, url, "idle", time.Minute, capacityOf(Capacity{CPUs: 4, CPUBusy: 0.2, FFmpegMax: 10}))
	// idle's free share is min(0.8, 1-k/10): it takes records until 1-k/10 drops below busy's
	// 0.1, i.e. 9 of the first 9; the 10th goes to busy (ties go to fewer leases).
	count := placeAll(t, []*Node{busy, idle}, records(t, st, 10), "")
	if count["idle"] != 9 || count["busy"] != 1 {
		t.Errorf("10 records, one node 90%% busy: %v; want idle 9, busy 1", count)
	}
}

func TestPlaceAffinity(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	a := join(t, url, "a", time.Minute, capacityOf(Capacity{FFmpegMax: 100}))
	b := join(t, url, "b", time.Minute, capacityOf(Capacity{FFmpegMax: 2}))
	ids := records(t, st, 5)
	server := ids[0]
	if _, err := b.Acquire(timeout(t), server); err != nil {
		t.Fatal(err)
	}
	// The readers of b's server module go to b, though a has far more room.
	count := placeAll(t, []*Node{a, b}, ids[1:4], server)
	if count["b"] != 3 {
		t.Errorf("readers of b's server: %v; want all on b", count)
	}
	// With b draining they go by capacity.
	if err := a.Drain(timeout(t), "b"); err != nil {
		t.Fatal(err)
	}
	if where, err := a.Place(timeout(t), ids[4], server); err != nil || where != "a" {
		t.Errorf("reader of a draining node's server placed on %q, %v; want a", where, err)
	}
}

func TestCapacityFree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c      Capacity
		leases int
		want   float64
		full   bool
	}{
		{Capacity{}, 0, 1, false},
		{Capacity{}, 50, 1, false}, // no ffmpeg limit: only the CPU counts
		{Capacity{CPUBusy: 0.25}, 0, 0.75, false},
		{Capacity{CPUBusy: 0.25, FFmpegMax: 4}, 2, 0.5, false},
		{Capacity{CPUBusy: 0.25, FFmpegMax: 4, FFmpeg: 3}, 1, 0.25, false},
		{Capacity{FFmpegMax: 4}, 4, 0, true},
		{Capacity{FFmpegMax: 4, FFmpeg: 9}, 0, 0, true},
		{Capacity{CPUBusy: math.NaN()}, 0, 1, false},
		{Capacity{CPUBusy: -3}, 0, 1, false},
		{Capacity{CPUBusy: 7}, 0, 0, false},
		{Capacity{FFmpegMax: -1, FFmpeg: -5}, 3, 1, false},
	} {
		if got := tc.c.free(tc.leases); got != tc.want {
			t.Errorf("%+v with %d leases: free %v; want %v", tc.c, tc.leases, got, tc.want)
		}
		if got := tc.c.full(tc.leases); got != tc.full {
			t.Errorf("%+v with %d leases: full %v; want %v", tc.c, tc.leases, got, tc.full)
		}
	}
}
