package media

import "time"

// ContinuityGap is the time an output leaves between the last unit it sent before a
// discontinuity (a new publisher session, a jump of the source's clock) and the first unit
// after it, so that its timestamps keep rising. One value for every output (the MPEG-TS
// remuxer, RTMP egress, RTSP push, the memory recording): half a second is more than the
// tracks of a session are usually skewed against each other at its start (the first unit of
// one track sets the shift; the other track's first units, a little earlier in the source, must
// still land after everything sent before), and it is invisible next to the reconnection
// that caused the discontinuity, which takes longer than that.
const ContinuityGap = 500 * time.Millisecond

// Continuity keeps an output's timeline rising across its stream's discontinuities: it gives
// the offset to add to each unit's timestamps, which moves, at a discontinuity, so that the
// unit lands ContinuityGap after the latest timestamp given so far. Timestamps are in Rate
// ticks a second, one clock for every track (callers rescale). The zero value works at 90 kHz
// and keeps the source's timestamps until the first discontinuity. A Continuity is for one
// goroutine.
type Continuity struct {
	// Rate is the ticks a second of the timestamps (90000 for MPEG-TS and RTP, 1000 for RTMP,
	// 1e9 for time.Duration); 0 is 90000.
	Rate int
	// FromZero starts the output at 0: the first unit's offset is minus its timestamp.
	// Otherwise the output keeps the source's timestamps until the first discontinuity.
	FromZero bool

	off, end int64
	started  bool
}

// Offset returns the offset to add to the unit whose decode timestamp is dts; discontinuity
// is the unit's flag (the first unit of a new session). It counts the unit as given.
func (c *Continuity) Offset(dts int64, discontinuity bool) int64 {
	switch {
	case !c.started && c.FromZero:
		c.off = -dts
	case c.started && discontinuity:
		c.off = c.end + c.Gap() - dts
	}
	if out := dts + c.off; !c.started || out > c.end {
		c.end, c.started = out, true
	}
	return c.off
}

// Current is the offset Offset gave last (0 before the first unit).
func (c *Continuity) Current() int64 { return c.off }

// End is the latest output timestamp given, offset included, and whether there is one.
func (c *Continuity) End() (int64, bool) { return c.end, c.started }

// Gap is ContinuityGap in Rate ticks.
func (c *Continuity) Gap() int64 {
	rate := c.Rate
	if rate <= 0 {
		rate = 90000
	}
	return Rescale(ContinuityGap.Microseconds(), 1_000_000, rate)
}

// Reset forgets the timeline: the next unit starts it afresh (from 0 with FromZero).
func (c *Continuity) Reset() { c.off, c.end, c.started = 0, 0, false }
