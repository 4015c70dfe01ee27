package segment

import "github.com/sluicemedia/sluice/internal/budget"

// Byte budgets of a player: what its segments and its window may hold, whatever their
// timestamps say. The defaults come from what real streams need: a 50 Mbit/s stream (4K
// HEVC, high-quality 1080p) sends 6.25 MB a second; the budgets allow twice that.
const (
	// DefaultByteRate is the bytes a second of media may carry: 12.5 MB, 100 Mbit/s
	// (budget.DefaultByteRate, the memory recordings' too).
	DefaultByteRate = budget.DefaultByteRate
	// DefaultSegmentBytes caps one segment: 64 MiB, 10 s of a 50 Mbit/s stream, past which a
	// segment is cut without waiting for a key frame.
	DefaultSegmentBytes = 64 << 20
	// DefaultMaxStoreBytes caps the segments a player keeps, whatever its window: 2 GiB, 5.7
	// minutes of a 50 Mbit/s stream, 36 minutes of an 8 Mbit/s one.
	DefaultMaxStoreBytes = 2 << 30
)
