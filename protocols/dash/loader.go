package dash

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
	// ErrNoMedia is wrapped by the error of a pull whose presentation ended before any media
	// reached the stream.
	ErrNoMedia = errors.New("the presentation ended before any media")
	// errStalled is wrapped when no new segment came for stallFactor segment durations.
	errStalled = errors.New("stalled")
	// errTooLarge is returned for a body over its cap (config.maxPlaylist, config.maxSegment).
	errTooLarge = errors.New("body too large")
	// errGone is returned by getRetry when the caller no longer wants the resource.
	errGone = errors.New("no longer wanted")
)

// statusError is an HTTP answer other than 200 or 206.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return "server answered " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}

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

// maxResponseHeaderBytes caps the response headers of a playlist or segment (64 KiB, bytes),
// instead of net/http's 10 MiB: an HTTP server sends a few hundred bytes.
const maxResponseHeaderBytes = 64 << 10

// loader downloads MPDs and segments: whole bodies up to their cap, one timeout per
// request. Safe for concurrent use.
type loader struct {
	client *http.Client
	cfg    config
}

// get downloads u in one attempt. It returns the body and the URL it came from after
// redirects. It fails with errTooLarge past limit bytes.
func (l *loader) get(ctx context.Context, u *url.URL, limit int64) ([]byte, *url.URL, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", "sluice")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, nil, &statusError{code: resp.StatusCode}
	}
	if resp.ContentLength > limit {
		return nil, nil, fmt.Errorf("declares %d bytes, over the cap of %d bytes: %w", resp.ContentLength, limit, errTooLarge)
	}
	// Read with the cap: memory follows the bytes that come, up to the cap and one more.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(body)) > limit {
		return nil, nil, fmt.Errorf("over the cap of %d bytes: %w", limit, errTooLarge)
	}
	return body, resp.Request.URL, nil
}

// getRetry downloads u, retrying what may succeed later (network errors, 404, 429, 5xx) with
// a growing pause until deadline; the error then wraps errStalled. Between attempts, failed
// is told of the error; when it answers false the wait ends with errGone.
func (l *loader) getRetry(ctx context.Context, u *url.URL, limit int64, deadline time.Time, failed func(error) bool) ([]byte, error) {
	delay := l.cfg.retryMin
	start := time.Now()
	for {
		body, _, err := l.get(ctx, u, limit)
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return body, err
		}
		if failed != nil && !failed(err) {
			return nil, errGone
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
