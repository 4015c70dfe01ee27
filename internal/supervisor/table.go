package supervisor

import (
	"context"
	"sync"
	"time"
)

// Table holds a server's processes by key: each one's value while it runs, when it last
// stopped, and the unique name of every process started since the table was made, until it is
// forgotten (a metrics scrape reports the stopped ones as stopped). Once closed nothing is
// added. The zero value is not usable: use NewTable.
type Table[K comparable, P any] struct {
	made time.Time

	mu        sync.Mutex
	procs     map[K]P
	stoppedAt map[K]time.Time
	names     map[K]string
	closed    bool
	// stopping counts the stops taken out of the table and not yet done, for Wait.
	stopping sync.WaitGroup
}

// NewTable returns an empty table, open.
func NewTable[K comparable, P any]() *Table[K, P] {
	return &Table[K, P]{made: time.Now(), procs: map[K]P{}, stoppedAt: map[K]time.Time{}, names: map[K]string{}}
}

// Get is the process running under k.
func (t *Table[K, P]) Get(k K) (P, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.procs[k]
	return p, ok
}

// Add puts p, named name, under k. It adds nothing when a process runs under k already (dup)
// or the table is closed.
func (t *Table[K, P]) Add(k K, p P, name string) (dup, closed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup = t.procs[k]; dup || t.closed {
		return dup, t.closed
	}
	t.procs[k] = p
	t.names[k] = name
	delete(t.stoppedAt, k)
	return false, false
}

// Take removes the process under k, to stop it, and notes when it stopped. When one ran, done
// must be called once its stop is over: Wait waits for it.
func (t *Table[K, P]) Take(k K) (p P, ok bool, done func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok = t.procs[k]
	delete(t.procs, k)
	t.stoppedAt[k] = time.Now()
	if !ok {
		return p, false, func() {}
	}
	t.stopping.Add(1)
	return p, true, sync.OnceFunc(t.stopping.Done)
}

// Forget drops what the table remembers of k once its process stopped: when, and its name.
func (t *Table[K, P]) Forget(k K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.stoppedAt, k)
	delete(t.names, k)
}

// StoppedSince is when the process under k last stopped: the table's making when none ran.
func (t *Table[K, P]) StoppedSince(k K) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at, ok := t.stoppedAt[k]; ok {
		return at
	}
	return t.made
}

// Keys lists the keys with a process running.
func (t *Table[K, P]) Keys() []K {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]K, 0, len(t.procs))
	for k := range t.procs {
		out = append(out, k)
	}
	return out
}

// Snapshot lists the processes running, and the keys and names of those that stopped and
// are not forgotten.
func (t *Table[K, P]) Snapshot() (running []P, stopped map[K]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	running = make([]P, 0, len(t.procs))
	for _, p := range t.procs {
		running = append(running, p)
	}
	stopped = map[K]string{}
	for k, name := range t.names {
		if _, ok := t.procs[k]; !ok {
			stopped[k] = name
		}
	}
	return running, stopped
}

// Closed tells whether Close ran.
func (t *Table[K, P]) Closed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Close closes the table and takes every process out of it, to stop them.
func (t *Table[K, P]) Close() []P {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	out := make([]P, 0, len(t.procs))
	for k, p := range t.procs {
		out = append(out, p)
		delete(t.procs, k)
		t.stoppedAt[k] = time.Now()
	}
	return out
}

// Wait waits for the stops taken out with Take to be done, at most until ctx ends, and tells
// whether they were.
func (t *Table[K, P]) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() {
		t.stopping.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
