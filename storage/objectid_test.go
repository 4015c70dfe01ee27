package storage_test

import (
	"encoding/hex"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestNewIDFormat(t *testing.T) {
	before := time.Now().Unix()
	id := storage.NewID()
	after := time.Now().Unix()
	if len(id) != 24 || !storage.ValidID(id) {
		t.Fatalf("NewID() = %q, want 24 hex digits", id)
	}
	if _, err := hex.DecodeString(id); err != nil {
		t.Fatalf("NewID() = %q: %v", id, err)
	}
	secs, err := strconv.ParseInt(id[:8], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if secs < before || secs > after {
		t.Errorf("time prefix %d not in [%d, %d]", secs, before, after)
	}
}

func TestNewIDUniqueAndOrdered(t *testing.T) {
	const goroutines, each = 8, 2000
	var mu sync.Mutex
	seen := make(map[string]bool, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, each)
			for i := range ids {
				ids[i] = storage.NewID()
			}
			for i := 1; i < len(ids); i++ {
				if ids[i][:8] < ids[i-1][:8] {
					t.Errorf("time prefix went back: %s after %s", ids[i], ids[i-1])
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] {
					t.Errorf("duplicate id %s", id)
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()

	// The process part is the same for every id; the counter part advances.
	a, b := storage.NewID(), storage.NewID()
	if a[8:18] != b[8:18] {
		t.Errorf("process bytes differ: %s %s", a, b)
	}
	ca, _ := strconv.ParseUint(a[18:], 16, 32)
	cb, _ := strconv.ParseUint(b[18:], 16, 32)
	if cb != (ca+1)&0xFFFFFF {
		t.Errorf("counter %06x then %06x, want +1", ca, cb)
	}
}

func TestValidID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"507f1f77bcf86cd799439011", true},
		{"507F1F77BCF86CD799439011", true},
		{"507f1f77bcf86cd79943901", false},
		{"507f1f77bcf86cd7994390111", false},
		{"507f1f77bcf86cd79943901g", false},
		{"", false},
		{"../../../../../etc/passwd", false},
	} {
		if got := storage.ValidID(c.in); got != c.want {
			t.Errorf("ValidID(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
