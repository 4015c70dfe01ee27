package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestConcurrentCreateSameName(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	const n = 20
	ok, taken := createAtOnce(t, n, storage.ErrNameTaken, func(i int) error {
		return s.Create(ctx, player("lobby", 8000+i))
	})
	if ok != 1 || taken != n-1 {
		t.Errorf("%d succeeded and %d got ErrNameTaken, want 1 and %d", ok, taken, n-1)
	}
	if claims, _ := s.PortClaims(ctx); len(claims) != 1 {
		t.Errorf("%d port claims, want 1: %+v", len(claims), claims)
	}
}

func TestConcurrentCreateSamePort(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	ok, _ := createAtOnce(t, 20, storage.ErrPortTaken, func(i int) error {
		return s.Create(ctx, rtmpServer(fmt.Sprint("rtmp ", i), 1935))
	})
	if ok != 1 {
		t.Errorf("%d succeeded, want 1", ok)
	}
	if docs, _ := s.ListDocs(ctx, storage.ModuleRTMPServers); len(docs) != 1 {
		t.Errorf("%d records stored, want 1", len(docs))
	}
}

// createAtOnce runs create(0) to create(n-1) in n goroutines at once and counts the calls that
// succeeded and those refused with refusal; any other error (any error at all when refusal is
// nil) fails the test.
func createAtOnce(t *testing.T, n int, refusal error, create func(i int) error) (ok, refused int) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = create(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, refusal):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return ok, refused
}

// TestConcurrentWriters mixes writes and reads from many goroutines, on two Stores open on the same
// file (as the server and a `sluice passwd` would be), or on the same PostgreSQL database (two
// nodes): nothing may fail with SQLITE_BUSY or a lost update.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	stores := openTwice(t)
	const goroutines, each = 10, 10
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[g%2]
			for i := range each {
				p := player(fmt.Sprintf("p-%d-%d", g, i), 10000+g*each+i)
				if err := s.Create(ctx, p); err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				if err := s.SetActive(ctx, storage.ModuleVOD, p.ID, true, at(0)); err != nil {
					t.Errorf("SetActive: %v", err)
				}
				if _, err := storage.Load[storage.Player](ctx, s, storage.ModuleVOD, p.ID); err != nil {
					t.Errorf("Load: %v", err)
				}
				if err := s.SetSetting(ctx, "last", p.ID); err != nil {
					t.Errorf("SetSetting: %v", err)
				}
				if _, err := s.ListDocs(ctx, storage.ModuleVOD); err != nil {
					t.Errorf("ListDocs: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	docs, err := stores[0].ListDocs(ctx, storage.ModuleVOD)
	if err != nil || len(docs) != goroutines*each {
		t.Errorf("%d records, %v; want %d", len(docs), err, goroutines*each)
	}
	if refs, _ := stores[1].ListActive(ctx); len(refs) != goroutines*each {
		t.Errorf("%d active, want %d", len(refs), goroutines*each)
	}
}

// TestConcurrentClaimDue: two Stores on one database (two nodes working one webhook outbox)
// claim due deliveries at once, a few at a time, until none is left: each delivery is claimed
// exactly once, so no webhook gets an event twice from two nodes.
func TestConcurrentClaimDue(t *testing.T) {
	ctx := context.Background()
	stores := openTwice(t)
	hook := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "all", URL: "http://127.0.0.1:1/"}
	if err := stores[0].Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	const deliveries = 300
	t0 := at(0)
	for i := range deliveries {
		if _, err := stores[i%2].AddDelivery(ctx, hook.ID, "ping", []byte(`{}`), t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	now, lease := t0.Add(time.Minute), t0.Add(time.Hour)
	var mu sync.Mutex
	claims := map[string]int{}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for range deliveries { // a bound, should claims repeat
				got, err := stores[g%2].ClaimDue(ctx, now, lease, 7)
				if err != nil {
					t.Errorf("ClaimDue: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					claims[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claims) != deliveries {
		t.Errorf("%d deliveries claimed, want %d", len(claims), deliveries)
	}
	for id, n := range claims {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", id, n)
		}
	}
}

// openTwice opens two Stores on one new target of the current pass (one SQLite file, or one
// PostgreSQL database: two processes, or two nodes), closed when the test ends.
func openTwice(t *testing.T) [2]*storage.Store {
	t.Helper()
	target := storage.NewTestTarget(t)
	return [2]*storage.Store{openTarget(t, target), openTarget(t, target)}
}
