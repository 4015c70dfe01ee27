package budget

import (
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	t.Parallel()
	if got := Bytes(DefaultByteRate, 10*time.Second, 1<<30); got != 125_000_000 {
		t.Errorf("10 s at 100 Mbit/s: %d", got)
	}
	if got := Bytes(DefaultByteRate, time.Hour, 1<<30); got != 1<<30 {
		t.Errorf("an hour: %d, want the cap", got)
	}
}

// TestLogLimit lets the first event through, counts those within a second, and lets the next
// line say how many it stands for.
func TestLogLimit(t *testing.T) {
	t.Parallel()
	var l LogLimit
	t0 := time.Unix(1000, 0)
	if n, ok := l.Note(t0, 2); !ok || n != 2 {
		t.Fatalf("first: %d %v", n, ok)
	}
	if n, ok := l.Note(t0.Add(500*time.Millisecond), 3); ok || n != 0 {
		t.Fatalf("within a second: %d %v", n, ok)
	}
	if n, ok := l.Note(t0.Add(LogEvery), 1); !ok || n != 4 {
		t.Fatalf("a second later: %d %v", n, ok)
	}
}
