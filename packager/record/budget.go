package record

import (
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
)

// Byte budgets of recordings: what a recording holds in memory, whatever its timestamps say.
// The defaults come from what real streams need: a 50 Mbit/s stream sends 6.25 MB a second;
// the budgets allow twice that.
const (
	// MaxFragmentBytes caps a recording's open fragment (mp4, mov and memory recordings): 16
	// MiB, a second of a 128 Mbit/s stream. Past it the fragment is cut before its second
	// ends, so that units whose timestamps hardly advance cannot pile up.
	MaxFragmentBytes = 16 << 20
	// DefaultByteRate is the bytes a second of a memory recording's window may carry: 12.5 MB,
	// 100 Mbit/s (budget.DefaultByteRate, the players' too).
	DefaultByteRate = budget.DefaultByteRate
	// DefaultMaxMemoryBytes caps a memory recording whatever its window: 1 GiB, 2.9 minutes of
	// a 50 Mbit/s stream, 18 minutes of an 8 Mbit/s one. Its download makes one more copy.
	DefaultMaxMemoryBytes = 1 << 30
	// memoryGOPSlack is the media a memory recording holds beyond its window: it keeps whole
	// GOPs, and live encoders' GOPs last up to 10 s.
	memoryGOPSlack = 10 * time.Second
)
