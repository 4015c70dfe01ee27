package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Defaults of the password-check pool; Config overrides them.
const (
	// DefaultLoginQueuePerWorker is how many password checks may wait per worker before more
	// are refused at once: at about 0.12 s a check on one core, a queue of 4 waits at most
	// half a second.
	DefaultLoginQueuePerWorker = 4
	// loginBusyRetry is the Retry-After of a login refused because every slot is busy.
	loginBusyRetry = time.Second
)

// DefaultLoginWorkers is how many password checks run at once: half the CPUs, at least one, so
// that a flood of logins from many addresses leaves the other half to the rest of the server.
func DefaultLoginWorkers() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// errHashBusy is returned when every worker and queue slot of the pool is taken.
var errHashBusy = errors.New("every password check slot is busy")

// hashPool runs password checks, the one costly thing an unauthenticated client can ask for, on
// at most workers goroutines at once, with at most queue callers waiting; a caller past that is
// refused at once. Checks run on the caller's goroutine (the HTTP server's, which exists
// anyway), so the pool owns no goroutine and a refused caller costs nothing more.
type hashPool struct {
	admit chan struct{} // workers+queue tokens: a caller without one is refused
	run   chan struct{} // workers tokens: their holders are hashing
	ran   atomic.Int64  // checks run, for tests
}

func newHashPool(workers, queue int) *hashPool {
	workers = max(workers, 1)
	return &hashPool{admit: make(chan struct{}, workers+max(queue, 0)), run: make(chan struct{}, workers)}
}

// check reports whether password matches hash, once a worker slot is free. It returns
// errHashBusy at once when the queue is full, and ctx's error when ctx ends while waiting.
func (p *hashPool) check(ctx context.Context, hash, password string) (bool, error) {
	select {
	case p.admit <- struct{}{}:
	default:
		return false, errHashBusy
	}
	defer func() { <-p.admit }()
	select {
	case p.run <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-p.run }()
	p.ran.Add(1)
	return CheckPassword(hash, password), nil
}

// dummyHash returns a hash no password matches (its key is random bytes) that costs a check
// as much as a real one with the current work factor, so that unknown user names cannot be told
// from known ones by the time a wrong password takes. Making it costs no PBKDF2.
func dummyHash() (string, error) {
	b := make([]byte, saltBytes+keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("%s$%d$%s$%s", hashPrefix, PasswordIterations, enc.EncodeToString(b[:saltBytes]), enc.EncodeToString(b[saltBytes:])), nil
}
