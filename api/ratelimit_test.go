package api

import (
	"testing"
	"time"
)

// TestRateLog: one line a second at most, reporting what it held back.
func TestRateLog(t *testing.T) {
	var l rateLog
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, n := l.allow(t0); !ok || n != 0 {
		t.Fatalf("first: %v %d", ok, n)
	}
	for i := range 5 {
		if ok, _ := l.allow(t0.Add(time.Duration(i*100) * time.Millisecond)); ok {
			t.Fatalf("event %d within the second logged", i)
		}
	}
	if ok, n := l.allow(t0.Add(time.Second)); !ok || n != 5 {
		t.Fatalf("after a second: %v %d, want true 5", ok, n)
	}
	if ok, _ := l.allow(t0.Add(-time.Hour)); !ok {
		t.Fatal("a clock set back an hour silenced the log")
	}
}
