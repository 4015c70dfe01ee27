package cluster

import (
	"testing"
	"time"
)

// TestServingLookups: at most servingLookups owner queries a second, counted afresh each second.
func TestServingLookups(t *testing.T) {
	var s servingCache
	t0 := time.Unix(5000, 0)
	n := 0
	for range servingLookups + 50 {
		if s.lookup(t0) {
			n++
		}
	}
	if n != servingLookups {
		t.Fatalf("%d lookups allowed in one second, want %d", n, servingLookups)
	}
	if !s.lookup(t0.Add(time.Second)) {
		t.Error("no lookup allowed in the next second")
	}
}
