package cluster

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// TestStatesOnLeases: the holder's states go onto its leases and any node reads them with the
// owner; a node that lost a lease (taken over after expiry) cannot write over the new holder's.
func TestStatesOnLeases(t *testing.T) {
	t.Parallel()
	a, b, ids := pair(t, 2*time.Second, 2, nil)
	ctx := timeout(t)
	if _, ok, err := b.OwnerOf(ctx, ids[0]); ok || err != nil {
		t.Fatalf("owner of a record with no lease: %v, %v", ok, err)
	}
	if _, err := a.Acquire(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", 3000)
	// ids[1] is not a's: skipped.
	if err := a.SetStates(ctx, []RecordState{{Record: ids[0], State: "running", Since: since, LastError: long, Restarts: 2},
		{Record: ids[1], State: "running"}}); err != nil {
		t.Fatal(err)
	}
	o, ok, err := b.OwnerOf(ctx, ids[0])
	if err != nil || !ok || o.Node != "a" || o.State != "running" || !o.Since.Equal(since) || o.Restarts != 2 || len(o.LastError) != maxErrorLen {
		t.Fatalf("owner read by b: %+v (error %d bytes), %v, %v", o, len(o.LastError), ok, err)
	}
	if _, ok, _ := b.OwnerOf(ctx, ids[1]); ok {
		t.Errorf("a record nobody holds has an owner")
	}
	// a stops renewing; b takes the record after the expiry; a's late write changes nothing.
	time.Sleep(2100 * time.Millisecond)
	if _, err := b.Acquire(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := b.SetStates(ctx, []RecordState{{Record: ids[0], State: "starting", Since: since}}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetStates(ctx, []RecordState{{Record: ids[0], State: "failed", Since: since}}); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := a.OwnerOf(ctx, ids[0]); !ok || err != nil || o.Node != "b" || o.State != "starting" {
		t.Errorf("after the takeover: %+v, %v, %v; want b starting", o, ok, err)
	}
}

// TestNotifyListen: a notification reaches every listening node, the sender too, and a payload
// over the limit is refused.
func TestNotifyListen(t *testing.T) {
	t.Parallel()
	url, _ := database(t)
	a := join(t, url, "a", 4*time.Second, nil)
	b := join(t, url, "b", 4*time.Second, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	got := map[string]chan string{"a": make(chan string, 10), "b": make(chan string, 10)}
	for _, n := range []*Node{a, b} {
		wg.Go(func() { _ = n.Listen(ctx, 100*time.Millisecond, func(p string) { got[n.ID()] <- p }) })
	}
	// LISTEN takes effect once its connection is up: send until both hear.
	deadline := time.Now().Add(10 * time.Second)
	heard := map[string]bool{}
	for len(heard) < 2 && time.Now().Before(deadline) {
		if err := a.Notify(timeout(t), "stop vod 123"); err != nil {
			t.Fatal(err)
		}
		for id, ch := range got {
			select {
			case p := <-ch:
				if p != "stop vod 123" {
					t.Fatalf("node %s got %q", id, p)
				}
				heard[id] = true
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if len(heard) != 2 {
		t.Fatalf("heard by %v, want a and b", heard)
	}
	if err := a.Notify(timeout(t), strings.Repeat("x", maxPayload+1)); err == nil {
		t.Error("a payload over the limit was sent")
	}
}

// TestListenOutlivesASilentConnection: a listening connection whose database host went silent
// (the database moved to another address; nothing is read, nothing fails) is found dead by its
// ping and opened again, so the node hears notifications again within seconds rather than
// when TCP's keepalive gives up, minutes later.
func TestListenOutlivesASilentConnection(t *testing.T) {
	t.Parallel()
	dbURL, proxied, _, px := proxiedDatabase(t)
	const ttl = 2 * time.Second
	a := join(t, proxied, "a", ttl, nil)
	b := join(t, dbURL, "b", ttl, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	got := make(chan string, 100)
	wg.Go(func() { _ = a.Listen(ctx, ttl/4, func(p string) { got <- p }) })
	hears := func(payload string, within time.Duration) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); {
			if err := b.Notify(timeout(t), payload); err != nil {
				t.Fatal(err)
			}
			select {
			case p := <-got:
				if p == payload {
					return true
				}
			case <-time.After(200 * time.Millisecond):
			}
		}
		return false
	}
	if !hears("before", 10*time.Second) {
		t.Fatal("a never heard a notification")
	}
	px.strand()
	start := time.Now()
	if !hears("after", 4*ttl) {
		t.Fatalf("a heard nothing within %v of its connection going silent", 4*ttl)
	}
	t.Logf("heard again %v after the connection went silent", time.Since(start).Round(time.Millisecond))
}

// TestUnheld: a node restarted with the same id finds the live leases of its earlier run, takes
// them back at once, and then finds none.
func TestUnheld(t *testing.T) {
	t.Parallel()
	url, st := database(t)
	first := join(t, url, "a", 10*time.Second, nil)
	ids := records(t, st, 2)
	ctx := timeout(t)
	if _, err := first.Acquire(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if un, err := first.Unheld(ctx); len(un) != 0 || err != nil {
		t.Fatalf("the holder's own leases listed as unheld: %v, %v", un, err)
	}
	again := join(t, url, "a", 10*time.Second, nil) // the restart: a new Node, the same id
	un, err := again.Unheld(ctx)
	if err != nil || len(un) != 1 || un[0].ID != ids[0] || un[0].Module != "MODULE_RESTREAM" {
		t.Fatalf("unheld after the restart: %v, %v; want %s", un, err, ids[0])
	}
	if _, err := again.Acquire(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if un, err := again.Unheld(ctx); len(un) != 0 || err != nil {
		t.Errorf("unheld after taking it back: %v, %v", un, err)
	}
}

// TestStatesOddErrors: a last error that is not valid UTF-8 (an ffmpeg stderr line, or a long
// error cut at maxErrorLen through a character) is still written, and does not keep the other
// records' states of the same write off their leases.
func TestStatesOddErrors(t *testing.T) {
	t.Parallel()
	a, b, ids := pair(t, 4*time.Second, 3, nil)
	ctx := timeout(t)
	acquireAll(t, a, ids)
	cut := strings.Repeat("x", maxErrorLen-1) + "é" // the cut falls inside é
	states := []RecordState{
		{Record: ids[0], State: "failed", LastError: cut},
		{Record: ids[1], State: "failed", LastError: "ffmpeg: exit status 1: bad \xff\xfe input \x00 here"},
		{Record: ids[2], State: "running"},
	}
	if err := a.SetStates(ctx, states); err != nil {
		t.Fatalf("SetStates: %v", err)
	}
	for i, id := range ids {
		o, ok, err := b.OwnerOf(ctx, id)
		if err != nil || !ok || o.State != states[i].State {
			t.Errorf("record %d read by b: %+v, %v, %v; want state %q", i, o, ok, err, states[i].State)
		}
		if len(o.LastError) > maxErrorLen || !utf8.ValidString(o.LastError) {
			t.Errorf("record %d: last error of %d bytes, valid UTF-8 %v", i, len(o.LastError), utf8.ValidString(o.LastError))
		}
	}
}
