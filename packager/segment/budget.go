package segment

import "time"

// Byte budgets of a player: what its segments and its window may hold, whatever their
// timestamps say. The defaults come from what real streams need: a 50 Mbit/s stream (4K
// HEVC, high-quality 1080p) sends 6.25 MB a second; the budgets allow twice that.
const (
	// DefaultByteRate is the bytes a second of media may carry: 12.5 MB, 100 Mbit/s.
	DefaultByteRate = 12_500_000
	// DefaultSegmentBytes caps one segment: 64 MiB, 10 s of a 50 Mbit/s stream, past which a
	// segment is cut without waiting for a key frame.
	DefaultSegmentBytes = 64 << 20
	// DefaultMaxStoreBytes caps the segments a player keeps, whatever its window: 2 GiB, 5.7
	// minutes of a 50 Mbit/s stream, 36 minutes of an 8 Mbit/s one.
	DefaultMaxStoreBytes = 2 << 30
)

// logEvery is the least time between two log lines of one kind.
const logEvery = time.Second

// logLimit lets one kind of log line through at most once per logEvery; the line says how
// many events it stands for.
type logLimit struct {
	at      time.Time
	pending int64
}

// note counts k events at now and reports whether to log, with the events since the last
// line.
func (l *logLimit) note(now time.Time, k int64) (int64, bool) {
	l.pending += k
	if !l.at.IsZero() && now.Sub(l.at) < logEvery {
		return 0, false
	}
	n := l.pending
	l.at, l.pending = now, 0
	return n, true
}
