package budget

import (
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	t.Parallel()
	l := Limit{}.WithDefaults(1 << 30)
	if l.ByteRate != DefaultByteRate || l.MaxBytes != 1<<30 {
		t.Errorf("defaults: %+v", l)
	}
	if got := l.Bytes(10 * time.Second); got != 125_000_000 {
		t.Errorf("10 s at 100 Mbit/s: %d", got)
	}
	if got := l.Bytes(time.Hour); got != 1<<30 {
		t.Errorf("an hour: %d, want the cap", got)
	}
	set := Limit{ByteRate: 1000, MaxBytes: 5000}.WithDefaults(1 << 30)
	if set.ByteRate != 1000 || set.MaxBytes != 5000 || set.Bytes(3*time.Second) != 3000 || set.Bytes(time.Minute) != 5000 {
		t.Errorf("set %+v: 3 s %d, a minute %d", set, set.Bytes(3*time.Second), set.Bytes(time.Minute))
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
