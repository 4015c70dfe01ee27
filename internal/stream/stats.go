package stream

import "time"

// Stats is a snapshot of a Stream's input.
type Stats struct {
	// Publishing tells whether a publisher is attached; Since is when it attached.
	Publishing bool
	Since      time.Time
	// Readers is the number of open readers.
	Readers int
	// BytesIn and UnitsIn count payload bytes and access units written over the stream's life.
	BytesIn int64
	UnitsIn int64
	// Bitrate is the payload bitrate in kbit/s, averaged over the last 2 s.
	Bitrate float64
	// FPS is video units per second over the last 2 s.
	FPS float64
	// LastUnit is when the latest unit arrived, to 100 ms (the start of its meter bucket);
	// zero before the first.
	LastUnit time.Time
	// Discontinuities counts publisher sessions that followed an earlier one.
	Discontinuities int64

	// Budgets hit over the stream's life.

	// Refused counts units refused for carrying more than Options.MaxUnitBytes.
	Refused int64
	// Dropped counts units the readers dropped because they were behind, all readers together.
	Dropped int64
	// UnitOverflows and ByteOverflows count the times a reader's queue overflowed, by the
	// budget it ran into: Options.QueueSize units or Options.QueueBytes bytes.
	UnitOverflows, ByteOverflows int64
	// Evicted counts readers closed for staying behind past Options.LagLimit.
	Evicted int64
	// GOPOverflows counts GOPs given up as the start of new readers for being longer than a
	// reader's queue (units or bytes): readers that joined during them waited for the next key
	// frame.
	GOPOverflows int64
}

const (
	meterBucket  = 100 * time.Millisecond
	meterWindow  = 2 * time.Second
	meterBuckets = int(meterWindow / meterBucket)
)

// meter counts bytes and video units in 100 ms buckets of arrival time, enough for rates over
// the last 2 s. Adding costs a division and two additions.
type meter struct {
	buckets [meterBuckets]struct {
		idx          int64 // arrival time / meterBucket
		bytes, video int64
	}
	first time.Time // first arrival ever; rates do not average over time before it
}

// add counts one unit that arrived at t.
func (m *meter) add(t time.Time, bytes int, video bool) {
	idx := t.UnixNano() / int64(meterBucket)
	b := &m.buckets[(idx%int64(meterBuckets)+int64(meterBuckets))%int64(meterBuckets)]
	if b.idx != idx {
		if idx < b.idx {
			return // older than the window
		}
		b.idx, b.bytes, b.video = idx, 0, 0
	}
	b.bytes += int64(bytes)
	if video {
		b.video++
	}
	if m.first.IsZero() || t.Before(m.first) {
		m.first = t
	}
}

// last returns the start of the newest bucket that counted a unit: when the latest unit
// arrived, to meterBucket. Zero before the first unit.
func (m *meter) last() time.Time {
	if m.first.IsZero() {
		return time.Time{}
	}
	var hi int64
	for _, b := range m.buckets {
		hi = max(hi, b.idx)
	}
	return time.Unix(0, hi*int64(meterBucket))
}

// rates returns the bitrate in kbit/s and the video units per second over the last 2 s.
func (m *meter) rates(now time.Time) (kbps, fps float64) {
	if m.first.IsZero() {
		return 0, 0
	}
	hi := now.UnixNano() / int64(meterBucket)
	lo := hi - int64(meterBuckets) + 1
	start := time.Unix(0, lo*int64(meterBucket))
	if m.first.After(start) {
		start = m.first
	}
	span := max(now.Sub(start), meterBucket).Seconds()
	var bytes, video int64
	for _, b := range m.buckets {
		if b.idx >= lo && b.idx <= hi {
			bytes += b.bytes
			video += b.video
		}
	}
	return float64(bytes) * 8 / 1000 / span, float64(video) / span
}
