package testutil

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// Baseline is a count of goroutines and open file descriptors, for tests that check a
// component leaves none behind.
type Baseline struct{ Goroutines, FDs int }

// TakeBaseline counts goroutines and open file descriptors now.
func TakeBaseline() Baseline { return Baseline{runtime.NumGoroutine(), countFDs()} }

// countFDs counts this process's open file descriptors (0 where /proc is missing).
func countFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// Check waits up to d for goroutines and descriptors to come back to b, and fails with every
// goroutine's stack when they do not.
func (b Baseline) Check(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		g, f := runtime.NumGoroutine(), countFDs()
		if g <= b.Goroutines && f <= b.FDs {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines %d (baseline %d), fds %d (baseline %d)\n%s", g, b.Goroutines, f, b.FDs, buf)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
