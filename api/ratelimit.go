package api

import (
	"sync"
	"time"
)

// maxTrackedClients bounds the failure table; past it, expired entries are swept.
const maxTrackedClients = 10000

// loginLimiter counts failed logins per client address within a sliding window.
type loginLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	fails  map[string][]time.Time
}

func newLoginLimiter(max int, window time.Duration) *loginLimiter {
	return &loginLimiter{max: max, window: window, fails: map[string][]time.Time{}}
}

// retryAfter is how long addr must wait before trying again; 0 when it may try now.
func (l *loginLimiter) retryAfter(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.prune(addr, now)
	if len(ts) < l.max {
		return 0
	}
	// Allowed again once enough failures age out of the window.
	return ts[len(ts)-l.max].Add(l.window).Sub(now)
}

// failed records a failed login from addr.
func (l *loginLimiter) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fails) >= maxTrackedClients {
		for a := range l.fails {
			l.prune(a, now)
		}
	}
	l.fails[addr] = append(l.prune(addr, now), now)
}

// succeeded forgets the failures of addr.
func (l *loginLimiter) succeeded(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, addr)
}

// prune drops failures older than the window; l.mu is held.
func (l *loginLimiter) prune(addr string, now time.Time) []time.Time {
	ts := l.fails[addr]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= l.window {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, addr)
		return nil
	}
	l.fails[addr] = ts
	return ts
}
