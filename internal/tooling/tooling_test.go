package tooling

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestPortsTake: ports taken from several goroutines are all different. (That each was free on
// TCP and UDP is Take's own probe; the test cannot check it again: other packages' tests open
// ephemeral sockets all the while, and twice in make test one took a port between Take's
// probe and the test's bind.)
func TestPortsTake(t *testing.T) {
	t.Parallel()
	var ps Ports
	got := make(chan int, 40)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				p, err := ps.Take()
				if err != nil {
					t.Error(err)
					return
				}
				got <- p
			}
		})
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for p := range got {
		if seen[p] || p <= 0 || p > 65535 {
			t.Fatalf("port %d handed out twice, or out of range", p)
		}
		seen[p] = true
	}
	if len(seen) != 40 {
		t.Fatalf("%d ports, want 40", len(seen))
	}
}

// TestProcOutputAndStop: a child's output is kept; a child that ends on the signal is not
// killed; one that ignores it is killed with its process group after the grace.
func TestProcOutputAndStop(t *testing.T) {
	t.Parallel()
	p, err := Start("obeys", "/bin/sh", []string{"TOOLING_TEST=hello"}, "-c", `echo "$TOOLING_TEST"; echo oops >&2; exec sleep 30`)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.Output(), "oops") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if out := p.Output(); out != "hello\noops\n" {
		t.Errorf("output %q, want hello and oops", out)
	}
	if p.Exited() {
		t.Fatal("exited before Stop")
	}
	start := time.Now()
	p.Stop(syscall.SIGTERM, 10*time.Second)
	if !p.Exited() || time.Since(start) > 5*time.Second {
		t.Errorf("SIGTERM: exited %v after %v, want at once", p.Exited(), time.Since(start))
	}

	// The shell ignores SIGINT and waits for its child (a sleep in the same group, which
	// would end on SIGINT were it not ignored too): only the kill after the grace ends both.
	q, err := Start("ignores", "/bin/sh", nil, "-c", `trap '' INT; sleep 30; echo survived`)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	q.Stop(syscall.SIGINT, 300*time.Millisecond)
	if d := time.Since(start); !q.Exited() || d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("SIGINT ignored: exited %v after %v, want killed after the 300ms grace", q.Exited(), d)
	}
	if strings.Contains(q.Output(), "survived") {
		t.Error("the group's sleep survived the kill")
	}
	q.Stop(syscall.SIGINT, time.Second) // a stopped process: returns at once
}

// TestStartMissingBinary: a binary that does not exist is an error naming the process.
func TestStartMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := Start("ghost", "/nonexistent/tooling-test", nil)
	if err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("err %v, want one naming ghost", err)
	}
}

// TestSyncBufferMax: writes from several goroutines all land; with Max, the buffer stops
// growing once it holds more than Max, while every write still reports success.
func TestSyncBufferMax(t *testing.T) {
	t.Parallel()
	var all SyncBuffer
	capped := SyncBuffer{Max: 100}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, b := range []*SyncBuffer{&all, &capped} {
					if n, err := b.Write([]byte("0123456789")); n != 10 || err != nil {
						t.Errorf("write: %d, %v", n, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := len(all.String()); n != 2000 {
		t.Errorf("uncapped buffer holds %d bytes, want 2000", n)
	}
	if n := len(capped.String()); n <= 100 || n > 110 {
		t.Errorf("buffer capped at 100 holds %d bytes, want 101 to 110", n)
	}
}

// TestLines: Containing finds the kept lines with a word, Tail the last ones; with Max the
// oldest lines go; adds from several goroutines all count.
func TestLines(t *testing.T) {
	t.Parallel()
	var all Lines
	capped := Lines{Max: 3}
	for i := range 5 {
		for _, l := range []*Lines{&all, &capped} {
			l.Add(fmt.Sprintf("line %d %s", i, []string{"even", "odd"}[i%2]))
		}
	}
	if got := all.Containing("odd"); !slices.Equal(got, []string{"line 1 odd", "line 3 odd"}) {
		t.Errorf("all, odd: %q", got)
	}
	if got := capped.Containing("even"); !slices.Equal(got, []string{"line 2 even", "line 4 even"}) {
		t.Errorf("capped, even: %q (line 0 should be gone)", got)
	}
	if got := all.Tail(2); !slices.Equal(got, []string{"line 3 odd", "line 4 even"}) {
		t.Errorf("tail 2: %q", got)
	}
	if got := capped.Tail(10); len(got) != 3 || got[0] != "line 2 even" {
		t.Errorf("capped, tail 10: %q", got)
	}
	var many Lines
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				many.Add("x")
			}
		})
	}
	wg.Wait()
	if n := len(many.Containing("x")); n != 400 {
		t.Errorf("%d lines kept of 400 added", n)
	}
}
