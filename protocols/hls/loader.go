package hls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Errors of a pull that callers may look for.
var (
	// ErrNoMedia is wrapped by the error of a pull whose playlist ended before any media
	// reached the stream.
	ErrNoMedia = errors.New("the playlist ended before any media")
	// errStalled is wrapped when no new segment appeared for stallFactor target durations.
	errStalled = errors.New("stalled")
	// errTooLarge is returned for a body over its cap (config.maxPlaylist, config.maxSegment).
	errTooLarge = errors.New("body too large")
)

// statusError is an HTTP answer other than 200 or 206.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return "server answered " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}

// config holds the tunables of a pull. Tests shrink them.
type config struct {
	// startDistance is how many segments from the live edge playback starts; a playlist
	// with fewer is reloaded until it has them. 3, as gohlslib and most players.
	startDistance int
	// stallFactor is how many target durations may pass without a new segment before the
	// pull fails. 3.
	stallFactor int
	// requestTimeout bounds one HTTP request, headers and body. 15 s.
	requestTimeout time.Duration
	// maxPlaylist caps one playlist, in bytes: 4 MiB, twice what a playlist of the longest
	// window a live server keeps (hours of 2 s segments with long signed URLs) needs.
	maxPlaylist int64
	// maxSegment caps one segment, in bytes: 64 MiB, 10 s of a 50 Mbit/s stream (HLS
	// authoring guidelines use 6 s segments: 37.5 MB at 50 Mbit/s).
	maxSegment int64
	// retryMin and retryMax bound the wait between retries of a failed request. 250 ms, 2 s.
	retryMin, retryMax time.Duration
	// maxQueued bounds the units downloaded ahead of the pacing, per rendition. 2048.
	maxQueued int
}

var defaultConfig = config{
	startDistance:  3,
	stallFactor:    3,
	requestTimeout: 15 * time.Second,
	maxPlaylist:    4 << 20,
	maxSegment:     64 << 20,
	retryMin:       250 * time.Millisecond,
	retryMax:       2 * time.Second,
	maxQueued:      2048,
}

// maxResponseHeaderBytes caps the response headers of a playlist or segment (64 KiB, bytes),
// instead of net/http's 10 MiB: an HTTP server sends a few hundred bytes.
const maxResponseHeaderBytes = 64 << 10

// byteRange is an EXT-X-BYTERANGE: length bytes from start.
type byteRange struct{ start, length uint64 }

// loader downloads playlists and segments: whole bodies up to their cap, one timeout per
// request. Safe for concurrent use.
type loader struct {
	client *http.Client
	cfg    config
}

// get downloads u (a part of it when rng is set) in one attempt, failing with errTooLarge past
// limit bytes.
func (l *loader) get(ctx context.Context, u *url.URL, rng *byteRange, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "sluice")
	if rng != nil && rng.length > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", rng.start, rng.start+rng.length-1))
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, &statusError{code: resp.StatusCode}
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("declares %d bytes, over the cap of %d bytes: %w", resp.ContentLength, limit, errTooLarge)
	}
	// Read with the cap: memory follows the bytes that come, up to the cap and one more.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("over the cap of %d bytes: %w", limit, errTooLarge)
	}
	if rng != nil && rng.length > 0 && resp.StatusCode == http.StatusOK {
		// The server ignored the range: cut it out of the whole resource.
		if rng.start+rng.length > uint64(len(body)) {
			return nil, fmt.Errorf("byte range %d@%d beyond %d bytes", rng.length, rng.start, len(body))
		}
		body = body[rng.start : rng.start+rng.length]
	}
	return body, nil
}

// getRetry downloads u, retrying what may succeed later (network errors, 404, 429, 5xx) with
// a growing pause until deadline; the error then wraps errStalled.
func (l *loader) getRetry(ctx context.Context, u *url.URL, rng *byteRange, limit int64, deadline time.Time) ([]byte, error) {
	delay := l.cfg.retryMin
	start := time.Now()
	for {
		body, err := l.get(ctx, u, rng, limit)
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return body, err
		}
		if left := time.Until(deadline); left <= 0 {
			return nil, fmt.Errorf("%w: retried for %s: %w", errStalled, time.Since(start).Round(time.Millisecond), err)
		} else if delay > left {
			delay = left // one last try at the deadline
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(2*delay, l.cfg.retryMax)
	}
}

// retryable tells whether a failed request may succeed later.
func retryable(err error) bool {
	if errors.Is(err, errTooLarge) {
		return false
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.code == http.StatusNotFound || se.code == http.StatusTooManyRequests || se.code >= 500
	}
	return true
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
