package supervisor

import "time"

// backoff is an exponential delay: initial, doubling after each use, capped at limit.
type backoff struct {
	initial, limit, cur time.Duration
}

func newBackoff(initial, limit time.Duration) backoff {
	return backoff{initial: initial, limit: limit, cur: initial}
}

// next returns the delay to wait now and doubles the one after.
func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(b.cur*2, b.limit)
	return d
}

// reset goes back to the initial delay.
func (b *backoff) reset() { b.cur = b.initial }
