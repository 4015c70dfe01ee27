package stream

import "time"

// budget names a bound a unit, a reader's queue or the kept GOP ran into, as logs name it.
type budget uint8

const (
	budgetNone       budget = iota
	budgetQueueUnits        // Options.QueueSize
	budgetQueueBytes        // Options.QueueBytes
	budgetGOPUnits          // the GOP kept for new readers, past Options.QueueSize units
	budgetGOPBytes          // the GOP kept for new readers, past Options.QueueBytes
	budgetUnitBytes         // Options.MaxUnitBytes
)

// String returns the budget's name in logs.
func (b budget) String() string {
	switch b {
	case budgetQueueUnits:
		return "queue_units"
	case budgetQueueBytes:
		return "queue_bytes"
	case budgetGOPUnits:
		return "gop_units"
	case budgetGOPBytes:
		return "gop_bytes"
	case budgetUnitBytes:
		return "max_unit_bytes"
	}
	return "none"
}

// limit returns the budget's value under opts.
func (b budget) limit(opts *Options) int {
	switch b {
	case budgetQueueUnits, budgetGOPUnits:
		return opts.QueueSize
	case budgetQueueBytes, budgetGOPBytes:
		return opts.QueueBytes
	case budgetUnitBytes:
		return opts.MaxUnitBytes
	}
	return 0
}

// logEvery is the least time between two log lines of one kind.
const logEvery = time.Second

// logLimit lets one kind of log line through at most once per logEvery; the line says how
// many events it stands for.
type logLimit struct {
	at      time.Time
	pending int64
}

// note counts one event at now and reports whether to log, with the events since the last line.
func (l *logLimit) note(now time.Time) (int64, bool) {
	l.pending++
	if !l.at.IsZero() && now.Sub(l.at) < logEvery {
		return 0, false
	}
	n := l.pending
	l.at, l.pending = now, 0
	return n, true
}
