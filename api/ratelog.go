package api

import (
	"sync"
	"time"
)

// logEvery is how often a repeated event an unauthenticated client can cause (a failed login, a
// busy password pool) is logged at most.
const logEvery = time.Second

// rateLog lets an event be logged at most once per logEvery; the events in between are counted
// and reported with the next line.
type rateLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow tells whether to log the event at now, and how many were not logged since the last line.
func (l *rateLog) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < logEvery && now.After(l.last.Add(-logEvery)) {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}
