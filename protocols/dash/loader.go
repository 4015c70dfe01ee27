package dash

import (
	"errors"
	"time"

	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// Errors of a pull that callers may look for.
var (
	// ErrNoMedia is wrapped by the error of a pull whose presentation ended before any media
	// reached the stream.
	ErrNoMedia = errors.New("the presentation ended before any media")
	// errStalled is wrapped when no new segment came for stallFactor segment durations.
	errStalled = httpget.ErrStalled
	// errTooLarge is returned for a body over its cap (config.maxPlaylist, config.maxSegment).
	errTooLarge = httpget.ErrTooLarge
	// errGone is returned by GetRetry when the caller no longer wants the resource.
	errGone = httpget.ErrGone
)

// config holds the tunables of a pull. Tests shrink them.
type config struct {
	// stallFactor is how many segment durations may pass without a new segment before the
	// pull fails. 3.
	stallFactor int
	// minStall is the least stall limit, for very short segments. 3 s.
	minStall time.Duration
	// minRefresh is the least time between two loads of the MPD. 500 ms.
	minRefresh time.Duration
	// requestTimeout bounds one HTTP request, headers and body. 15 s.
	requestTimeout time.Duration
	// maxPlaylist caps one MPD, in bytes: 4 MiB, twice what a MPD of the longest
	// window a live server keeps (hours of 2 s segments with long signed URLs) needs.
	maxPlaylist int64
	// maxSegment caps one segment, in bytes: 64 MiB, 10 s of a 50 Mbit/s stream (HLS
	// authoring guidelines use 6 s segments: 37.5 MB at 50 Mbit/s).
	maxSegment int64
	// retryMin and retryMax bound the wait between retries of a failed request. 250 ms, 2 s.
	retryMin, retryMax time.Duration
	// maxQueued bounds the units downloaded ahead of the pacing, per representation. 2048.
	maxQueued int
}

var defaultConfig = config{
	stallFactor:    3,
	minStall:       3 * time.Second,
	minRefresh:     500 * time.Millisecond,
	requestTimeout: 15 * time.Second,
	maxPlaylist:    4 << 20,
	maxSegment:     64 << 20,
	retryMin:       250 * time.Millisecond,
	retryMax:       2 * time.Second,
	maxQueued:      2048,
}

// loader downloads MPDs and segments (httpget) with the pull's tunables at hand.
type loader struct {
	*httpget.Loader
	cfg config
}

// newLoader returns a loader for cfg; Close it when done.
func newLoader(cfg config) *loader {
	return &loader{Loader: httpget.New(httpget.Options{RequestTimeout: cfg.requestTimeout, RetryMin: cfg.retryMin, RetryMax: cfg.retryMax}), cfg: cfg}
}
