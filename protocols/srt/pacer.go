package srt

import (
	"context"
	"time"
)

// pacer holds a sender to a byte rate (the maxbw option): gosrt's live sender sends whatever
// is written at once, whatever its MaxBW says. Bursts up to a quarter second of the rate pass
// without waiting; beyond that the writer sleeps, its reader falls behind, and the stream's
// reader queue drops and skips to the next key frame, as a live sender should.
type pacer struct {
	rate   float64 // bytes per second
	burst  float64
	tokens float64
	last   time.Time
}

// newPacer returns a pacer for rate bytes per second, or nil for none (rate ≤ 0).
func newPacer(rate int64) *pacer {
	if rate <= 0 {
		return nil
	}
	burst := max(float64(rate)/4, 64<<10)
	return &pacer{rate: float64(rate), burst: burst, tokens: burst, last: time.Now()}
}

// wait takes n bytes from the bucket, sleeping until they are there or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p == nil {
		return nil
	}
	now := time.Now()
	p.tokens = min(p.burst, p.tokens+now.Sub(p.last).Seconds()*p.rate)
	p.last = now
	p.tokens -= float64(n)
	if p.tokens >= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(-p.tokens / p.rate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
