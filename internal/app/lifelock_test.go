package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// TestLifeLocksSerialise: holders of one record's lock never overlap, other records' locks are
// independent, a waiter gives up when its context ends, and no entry outlives its users.
func TestLifeLocksSerialise(t *testing.T) {
	var l lifeLocks
	a, b := procKey{storage.ModuleVOD, "a"}, procKey{storage.ModuleVOD, "b"}
	var inside, most, total int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				unlock, err := l.lock(context.Background(), a)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				most = max(most, inside)
				total++
				mu.Unlock()
				mu.Lock()
				inside--
				mu.Unlock()
				unlock()
			}
		})
	}
	wg.Wait()
	if most != 1 || total != 32*50 {
		t.Fatalf("at most %d holders at once (want 1), %d entries (want %d)", most, total, 32*50)
	}

	unlockA, err := l.lock(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	// Another record is not held up.
	unlockB, err := l.lock(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.lock(ctx, a); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock of a held record with an ending context: %v, want DeadlineExceeded", err)
	}
	unlockA()
	unlockA() // a second release does nothing
	if n := l.size(); n != 0 {
		t.Fatalf("%d lock entries left with no holder", n)
	}
	unlock, err := l.lock(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}
