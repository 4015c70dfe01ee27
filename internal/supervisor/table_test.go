package supervisor

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestTable: a key runs one process; a stopped one is remembered (when, its name) until
// forgotten; a closed table adds nothing; Wait waits for the stops taken out.
func TestTable(t *testing.T) {
	t.Parallel()
	tb := NewTable[string, int]()
	if dup, closed := tb.Add("a", 1, "one"); dup || closed {
		t.Fatalf("first add: dup %v closed %v", dup, closed)
	}
	if dup, _ := tb.Add("a", 2, "two"); !dup {
		t.Fatal("a second process under the same key was added")
	}
	if p, ok := tb.Get("a"); !ok || p != 1 {
		t.Fatalf("get a: %v %v", p, ok)
	}
	tb.Add("b", 3, "three")
	keys := tb.Keys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("keys %v", keys)
	}
	made := tb.StoppedSince("a")

	p, ok, done := tb.Take("a")
	if !ok || p != 1 {
		t.Fatalf("take a: %v %v", p, ok)
	}
	if _, ok := tb.Get("a"); ok {
		t.Fatal("a taken process is still there")
	}
	if !tb.StoppedSince("a").After(made) && !tb.StoppedSince("a").Equal(made) {
		t.Fatal("no stop time")
	}
	running, stopped := tb.Snapshot()
	if !slices.Equal(running, []int{3}) || len(stopped) != 1 || stopped["a"] != "one" {
		t.Fatalf("snapshot: running %v stopped %v", running, stopped)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if tb.Wait(short) {
		t.Fatal("Wait returned before the stop taken out was done")
	}
	done()
	done() // twice is harmless
	if !tb.Wait(context.Background()) {
		t.Fatal("Wait did not see the stop done")
	}
	if _, ok, _ := tb.Take("a"); ok {
		t.Fatal("a second take found a process")
	}
	tb.Forget("a")
	if _, stopped := tb.Snapshot(); len(stopped) != 0 {
		t.Fatalf("forgotten, still stopped: %v", stopped)
	}
	if !tb.StoppedSince("a").Equal(made) {
		t.Fatal("a forgotten key's stop time is not the table's making")
	}

	if got := tb.Close(); !slices.Equal(got, []int{3}) || !tb.Closed() {
		t.Fatalf("close took %v", got)
	}
	if dup, closed := tb.Add("c", 4, "four"); dup || !closed {
		t.Fatalf("add after close: dup %v closed %v", dup, closed)
	}
	if len(tb.Keys()) != 0 {
		t.Fatal("processes left after close")
	}
}
