package httpget

import "time"

// Config holds the tunables the HLS and DASH pulls share. Tests shrink them.
type Config struct {
	// StallFactor is how many target (HLS) or segment (DASH) durations may pass without a new
	// segment before the pull fails. 3.
	StallFactor int
	// RequestTimeout bounds one HTTP request, headers and body. 15 s.
	RequestTimeout time.Duration
	// MaxPlaylist caps one playlist or MPD, in bytes: 4 MiB, twice what one of the longest
	// window a live server keeps (hours of 2 s segments with long signed URLs) needs.
	MaxPlaylist int64
	// MaxSegment caps one segment, in bytes: 64 MiB, 10 s of a 50 Mbit/s stream (HLS
	// authoring guidelines use 6 s segments: 37.5 MB at 50 Mbit/s).
	MaxSegment int64
	// RetryMin and RetryMax bound the wait between retries of a failed request. 250 ms, 2 s.
	RetryMin, RetryMax time.Duration
	// MaxQueued bounds the units downloaded ahead of the pacing, per rendition or
	// representation. 2048.
	MaxQueued int
}

// DefaultConfig is the Config of a pull.
var DefaultConfig = Config{
	StallFactor:    3,
	RequestTimeout: 15 * time.Second,
	MaxPlaylist:    4 << 20,
	MaxSegment:     64 << 20,
	RetryMin:       250 * time.Millisecond,
	RetryMax:       2 * time.Second,
	MaxQueued:      2048,
}

// PullLoader is a Loader with the tunables of one pull at hand. Close it when done.
type PullLoader struct {
	*Loader
	Config
}

// NewPullLoader returns a PullLoader for cfg, with its timeouts.
func NewPullLoader(cfg Config) *PullLoader {
	return &PullLoader{Loader: New(Options{RequestTimeout: cfg.RequestTimeout, RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax}), Config: cfg}
}
