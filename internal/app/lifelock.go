package app

import (
	"context"
	"fmt"
	"sync"
)

// lifeLocks is one lock per record, for its lifecycle: create, update, start, stop and remove
// of the same record run one at a time, each across its store write and its process action.
// An entry lives only while someone holds or waits for it, so the map is bounded by the
// requests in flight, not by the records ever seen.
type lifeLocks struct {
	mu    sync.Mutex
	locks map[procKey]*lifeLock
}

type lifeLock struct {
	held chan struct{} // a token in the channel is the lock
	refs int           // holders and waiters; the entry goes when it drops to 0
}

// lock waits for the record's lock, or until ctx ends. The returned func releases it; call it
// exactly once.
func (l *lifeLocks) lock(ctx context.Context, key procKey) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[procKey]*lifeLock{}
	}
	e := l.locks[key]
	if e == nil {
		e = &lifeLock{held: make(chan struct{}, 1)}
		l.locks[key] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.held <- struct{}{}:
	case <-ctx.Done():
		l.drop(key, e)
		return nil, fmt.Errorf("%s %s: waiting for another change of the record: %w", key.m, key.id, ctx.Err())
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-e.held
			l.drop(key, e)
		})
	}, nil
}

func (l *lifeLocks) drop(key procKey, e *lifeLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(l.locks, key)
	}
}

// size is the number of records whose lock is held or waited for.
func (l *lifeLocks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
