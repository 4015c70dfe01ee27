package stream

import (
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Defaults of Options.
const (
	// DefaultQueueSize is each reader's queue in access units: about 14 s of 25 fps video with
	// AAC, 9 s at 60 fps.
	DefaultQueueSize = 1024
	// DefaultQueueBytes is each reader's queue in payload bytes: 64 MiB, twice what a 50 Mbit/s
	// stream sends over the 5 s lag limit (31 MB).
	DefaultQueueBytes = 64 << 20
	// DefaultMaxUnitBytes is the largest access unit a Stream accepts: 8 MiB, the cap of the
	// protocol parsers (RTMP message, FLV tag, TS PES), over twice a 50 Mbit/s stream's largest
	// key frames (about 3 MiB with a 2 s GOP). The Stream enforces it for every source.
	DefaultMaxUnitBytes = 8 << 20
	// maxBytesLimit caps QueueBytes and MaxUnitBytes, so that a queue's byte count fits 32 bits.
	maxBytesLimit = 1 << 30
	// DefaultLagLimit is how long a reader may stay behind before it is closed.
	DefaultLagLimit = 5 * time.Second
	// DefaultAudioPrefill is how many units a new reader of a stream without video starts with.
	DefaultAudioPrefill = 50
)

// Options tune a Stream. The zero value uses the defaults.
type Options struct {
	// QueueSize is how many access units each reader can hold before it drops; rounded up to a
	// power of two. It also bounds the GOP kept for new readers. Default 1024.
	QueueSize int
	// QueueBytes is how many payload bytes each reader's queue may hold before it drops, as it
	// does past QueueSize units (the payloads are shared with the other readers: this is what
	// the reader keeps alive). It also bounds the GOP kept for new readers. A unit is always
	// accepted into an empty queue. Default 64 MiB, at most 1 GiB.
	QueueBytes int
	// MaxUnitBytes is the largest access unit, in payload bytes, that Write accepts; a larger
	// one is refused, counted (Stats.Refused) and logged, and the later units of its video
	// track wait for the next key frame. Default 8 MiB, at most 1 GiB.
	MaxUnitBytes int
	// LagLimit is how long a reader may stay behind, from its first drop until its queue is
	// back to at most half full, before it is closed with ErrReaderTooSlow. Checked on writes.
	// Default 5 s.
	LagLimit time.Duration
	// AudioPrefill is how many units a new reader of a stream without video starts with.
	// Default 50 (about a second of AAC or Opus).
	AudioPrefill int
	// Log receives drop, refusal and eviction messages, at most one a second of each kind.
	// Default slog.Default().
	Log *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// withDefaults returns o with every unset field at its default.
func (o Options) withDefaults() Options {
	opt.Positive(&o.QueueSize, DefaultQueueSize)
	size := 1
	for size < o.QueueSize {
		size <<= 1
	}
	o.QueueSize = size
	opt.Positive(&o.QueueBytes, DefaultQueueBytes)
	o.QueueBytes = min(o.QueueBytes, maxBytesLimit)
	opt.Positive(&o.MaxUnitBytes, DefaultMaxUnitBytes)
	o.MaxUnitBytes = min(o.MaxUnitBytes, maxBytesLimit)
	opt.Positive(&o.LagLimit, DefaultLagLimit)
	opt.Positive(&o.AudioPrefill, DefaultAudioPrefill)
	o.AudioPrefill = min(o.AudioPrefill, o.QueueSize)
	opt.Zero(&o.Log, slog.Default())
	opt.Clock(&o.Now)
	return o
}
