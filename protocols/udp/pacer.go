package udp

import (
	"context"
	"time"
)

// Pacing limits.
const (
	// maxSpread caps the time over which one access unit's datagrams are spread.
	maxSpread = 200 * time.Millisecond
	// lateLimit: a unit due further back than this re-anchors the clock (the stream stalled
	// or the publisher came back) instead of being sent in a burst to catch up.
	lateLimit = time.Second
	// aheadLimit: a unit due further ahead than this re-anchors the clock (a jump forward in
	// the timestamps) instead of a long silence.
	aheadLimit = 2 * time.Second
	// maxLag: a unit due this long after it reached the server re-anchors the clock. A burst
	// (a publisher catching up, a new reader's GOP) is paced out over its duration, but forward
	// jumps under aheadLimit, one per publisher session, must not add up to a lag that fills the
	// reader's queue (it would be evicted as too slow).
	maxLag = 6 * time.Second
	// minSleep: a datagram due sooner than this is sent at once.
	minSleep = time.Millisecond
)

// pacer maps output timestamps (90 kHz) to wall-clock send times: each unit is due at its
// DTS relative to an anchor, never before the unit before it.
type pacer struct {
	anchored   bool
	anchorWall time.Time
	anchor90   int64
	prev       time.Time
	timer      *time.Timer
}

// due returns when a unit with output DTS dts90 that reached the server at arrival (zero:
// unknown) is to be sent.
func (p *pacer) due(dts90 int64, arrival, now time.Time) time.Time {
	if !p.anchored {
		p.anchored, p.anchorWall, p.anchor90 = true, now, dts90
	}
	at := p.anchorWall.Add(time.Duration(dts90-p.anchor90) * time.Second / 90000)
	if at.Before(now.Add(-lateLimit)) || at.After(now.Add(aheadLimit)) || !arrival.IsZero() && at.After(arrival.Add(maxLag)) {
		p.anchorWall, p.anchor90, at = now, dts90, now
	}
	if at.Before(p.prev) {
		at = p.prev
	}
	p.prev = at
	return at
}

// spread returns when the i-th of n datagrams of a unit due at from is to be sent, the unit
// after it being due at to.
func spread(from, to time.Time, i, n int) time.Time {
	span := min(to.Sub(from), maxSpread)
	if span <= 0 || n <= 1 {
		return from
	}
	return from.Add(span * time.Duration(i) / time.Duration(n))
}

// sleepUntil waits until at; false when ctx ended first.
func (p *pacer) sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d < minSleep {
		return ctx.Err() == nil
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.timer.C:
		return true
	case <-ctx.Done():
		p.timer.Stop()
		return false
	}
}
