package srt

import (
	"log/slog"
	"sync"
	"time"
)

// rateLog logs at most one message a second and counts the ones it left out.
type rateLog struct {
	log *slog.Logger

	mu      sync.Mutex
	last    time.Time
	skipped int
}

func (r *rateLog) note(msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if now.Sub(r.last) < time.Second {
		r.skipped++
		r.mu.Unlock()
		return
	}
	skipped := r.skipped
	r.last, r.skipped = now, 0
	r.mu.Unlock()
	if skipped > 0 {
		args = append(args, "not_logged_since", skipped)
	}
	r.log.Warn(msg, args...)
}
