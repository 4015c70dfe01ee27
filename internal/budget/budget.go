// Package budget holds what the byte budgets of the players' segment stores and the memory
// recordings share: the default byte rate, the setting of a budget (Limit: a rate and a cap) and
// its bytes over a span of media, and the rate limit of the lines that log a budget's evictions. Standard library only.
package budget

import "time"

// DefaultByteRate is the bytes a second of media may carry: 12.5 MB, 100 Mbit/s, twice a 50
// Mbit/s stream (4K HEVC, high-quality 1080p), which sends 6.25 MB a second.
const DefaultByteRate = 12_500_000

// Limit is the setting of a byte budget that a player's segment store and a memory recording
// each embed in their options.
type Limit struct {
	// ByteRate is the bytes a second of the media kept may carry. Default DefaultByteRate (100
	// Mbit/s, twice a 50 Mbit/s stream).
	ByteRate int64
	// MaxBytes caps the budget whatever the media kept: an operator setting. Default: the
	// owner's (2 GiB for a player's store, 1 GiB for a memory recording).
	MaxBytes int64
}

// WithDefaults returns l with DefaultByteRate and maxBytes in place of zero or negative values.
func (l Limit) WithDefaults(maxBytes int64) Limit {
	if l.ByteRate <= 0 {
		l.ByteRate = DefaultByteRate
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = maxBytes
	}
	return l
}

// Bytes returns the budget of span of media kept: ByteRate bytes a second, at most MaxBytes.
func (l Limit) Bytes(span time.Duration) int64 {
	b := float64(l.ByteRate) * span.Seconds()
	if b >= float64(l.MaxBytes) {
		return l.MaxBytes
	}
	return int64(b)
}

// LogEvery is the least time between two log lines of one kind.
const LogEvery = time.Second

// LogLimit lets one kind of log line through at most once per LogEvery; the line says how many
// events it stands for. Its zero value is ready; it is not safe for concurrent use.
type LogLimit struct {
	at      time.Time
	pending int64
}

// Note counts k events at now and reports whether to log, with the events since the last line.
func (l *LogLimit) Note(now time.Time, k int64) (int64, bool) {
	l.pending += k
	if !l.at.IsZero() && now.Sub(l.at) < LogEvery {
		return 0, false
	}
	n := l.pending
	l.at, l.pending = now, 0
	return n, true
}
