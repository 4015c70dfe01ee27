package stream

import (
	"runtime"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

func TestRingWrapsAndRefusesWhenFull(t *testing.T) {
	var r ring
	r.init(4)
	units := make([]*media.AccessUnit, 10)
	for i := range units {
		units[i] = &media.AccessUnit{DTS: int64(i)}
	}
	next := 0
	for i, au := range units {
		if !r.push(slot{au: au}) {
			t.Fatalf("push %d refused", i)
		}
		if i >= 2 { // stay three behind while the indexes wrap
			s, ok := r.pop()
			if !ok || s.au != units[next] {
				t.Fatalf("pop got %v, want unit %d", s.au, next)
			}
			next++
		}
	}
	for r.len() < 4 {
		r.push(slot{})
	}
	if r.push(slot{}) {
		t.Fatal("push into a full ring accepted")
	}
	if r.len() != 4 {
		t.Fatalf("len() = %d, want 4", r.len())
	}
}

// TestRingConcurrent runs one producer and one consumer; -race checks the ordering.
func TestRingConcurrent(t *testing.T) {
	var r ring
	r.init(8)
	const n = 20000
	units := make([]*media.AccessUnit, n)
	for i := range units {
		units[i] = &media.AccessUnit{DTS: int64(i)}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, au := range units {
			for !r.push(slot{au: au}) {
				runtime.Gosched()
			}
		}
	}()
	for i := 0; i < n; {
		s, ok := r.pop()
		if !ok {
			runtime.Gosched()
			continue
		}
		if s.au != units[i] || s.au.DTS != int64(i) {
			t.Fatalf("pop %d got DTS %d", i, s.au.DTS)
		}
		i++
	}
	<-done
}
