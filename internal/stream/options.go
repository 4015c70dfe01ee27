package stream

import (
	"log/slog"
	"time"
)

// Defaults of Options.
const (
	DefaultQueueSize    = 1024
	DefaultLagLimit     = 5 * time.Second
	DefaultAudioPrefill = 50
)

// Options tune a Stream. The zero value uses the defaults.
type Options struct {
	// QueueSize is how many access units each reader can hold before it drops; rounded up to a
	// power of two. It also bounds the GOP kept for new readers. Default 1024.
	QueueSize int
	// LagLimit is how long a reader may stay behind, from its first drop until its queue is
	// back to at most half full, before it is closed with ErrReaderTooSlow. Checked on writes.
	// Default 5 s.
	LagLimit time.Duration
	// AudioPrefill is how many units a new reader of a stream without video starts with.
	// Default 50 (about a second of AAC or Opus).
	AudioPrefill int
	// Log receives drop and eviction messages, at most one a second per reader.
	// Default slog.Default().
	Log *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// withDefaults returns o with every unset field at its default.
func (o Options) withDefaults() Options {
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	size := 1
	for size < o.QueueSize {
		size <<= 1
	}
	o.QueueSize = size
	if o.LagLimit <= 0 {
		o.LagLimit = DefaultLagLimit
	}
	if o.AudioPrefill <= 0 {
		o.AudioPrefill = DefaultAudioPrefill
	}
	o.AudioPrefill = min(o.AudioPrefill, o.QueueSize)
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
