package stream

import (
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRegistryPublishBusy(t *testing.T) {
	g := NewRegistry(testOptions(newFakeClock()))
	a, err := g.Publish("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Publish("a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second publisher: %v, want ErrBusy", err)
	}
	if _, err := g.Publish("b"); err != nil {
		t.Fatalf("publisher on another name: %v", err)
	}
	a.Close()
	a2, err := g.Publish("a")
	if err != nil {
		t.Fatalf("publisher after the first left: %v", err)
	}
	if a2.Stream() != a.Stream() {
		t.Error("a reconnecting publisher got a new stream")
	}

	s, ok := g.Get("a")
	if !ok || s != a.Stream() || g.GetOrCreate("a") != s {
		t.Fatal("Get and GetOrCreate do not return the published stream")
	}
	if _, ok := g.Get("none"); ok {
		t.Error("Get found a stream never created")
	}
	g.GetOrCreate("0-first")
	var names []string
	for _, s := range g.List() {
		names = append(names, s.Name())
	}
	if want := []string{"0-first", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("List() = %v, want %v", names, want)
	}

	r := mustReader(t, s, "r")
	if !g.Remove("a") || g.Remove("a") {
		t.Error("Remove reported wrongly")
	}
	if _, err := r.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Errorf("reader of a removed stream: %v, want io.EOF", err)
	}
	if err := a2.Write(vid(0, true)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write to a removed stream: %v, want ErrClosed", err)
	}
	if _, ok := g.Get("a"); ok {
		t.Error("removed stream still listed")
	}
	if g.GetOrCreate("a") == s {
		t.Error("GetOrCreate returned the removed stream")
	}

	// A stream closed behind the registry's back is replaced.
	b := g.GetOrCreate("b")
	b.Close()
	if g.GetOrCreate("b") == b {
		t.Error("GetOrCreate returned a closed stream")
	}
	for _, s := range g.List() {
		s.Close()
	}
}

func TestRegistryConcurrentPublish(t *testing.T) {
	g := NewRegistry(testOptions(newFakeClock()))
	var ok, busy atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, err := g.Publish("live")
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrBusy):
				busy.Add(1)
			default:
				t.Errorf("Publish: %v", err)
			}
			g.List()
		})
	}
	wg.Wait()
	if ok.Load() != 1 || busy.Load() != 49 {
		t.Errorf("%d publishers accepted and %d refused, want 1 and 49", ok.Load(), busy.Load())
	}
	g.Remove("live")
}
