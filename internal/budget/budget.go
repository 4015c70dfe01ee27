// Package budget holds what the byte budgets of the players' segment stores and the memory
// recordings share: the default byte rate, the budget of that rate over a span of media (with
// a cap), and the rate limit of the lines that log a budget's evictions. Standard library only.
package budget

import "time"

// DefaultByteRate is the bytes a second of media may carry: 12.5 MB, 100 Mbit/s, twice a 50
// Mbit/s stream (4K HEVC, high-quality 1080p), which sends 6.25 MB a second.
const DefaultByteRate = 12_500_000

// Bytes returns rate bytes a second over span, at most limit.
func Bytes(rate int64, span time.Duration, limit int64) int64 {
	b := float64(rate) * span.Seconds()
	if b >= float64(limit) {
		return limit
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
