// Package httpget downloads the playlists, manifests and segments of the HLS and DASH pulls:
// whole bodies up to a cap, one timeout per request, retries of what may succeed later with a
// growing pause, and the errors the pulls tell apart. Both pulls use one Loader each.
package httpget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/internal/redact"
)

// Errors a pull tells apart.
var (
	// ErrStalled is wrapped when a download was retried until its deadline.
	ErrStalled = errors.New("stalled")
	// ErrTooLarge is returned for a body over its cap.
	ErrTooLarge = errors.New("body too large")
	// ErrGone is returned by GetRetry when the caller no longer wants the resource.
	ErrGone = errors.New("no longer wanted")
)

// StatusError is an HTTP answer other than 200 or 206.
type StatusError struct{ Code int }

func (e *StatusError) Error() string {
	return "server answered " + strconv.Itoa(e.Code) + " " + http.StatusText(e.Code)
}

// IsStatus tells whether err is, or wraps, an answer with one of codes.
func IsStatus(err error, codes ...int) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	for _, c := range codes {
		if se.Code == c {
			return true
		}
	}
	return false
}

// MaxResponseHeaderBytes caps the response headers of one download (64 KiB) instead of
// net/http's 10 MiB: an HTTP server sends a few hundred bytes.
const MaxResponseHeaderBytes = 64 << 10

// Options are a Loader's timeouts.
type Options struct {
	// RequestTimeout bounds one request, headers and body.
	RequestTimeout time.Duration
	// RetryMin and RetryMax bound the pause between two attempts of GetRetry; it doubles
	// from RetryMin after each failure.
	RetryMin, RetryMax time.Duration
}

// Range is a part of a resource: Length bytes from Start (HLS's EXT-X-BYTERANGE).
type Range struct{ Start, Length uint64 }

// Loader downloads over its own HTTP transport. Safe for concurrent use; Close it when done.
type Loader struct {
	client *http.Client
	tr     *http.Transport
	opts   Options
}

// New returns a Loader with opts, on a transport of its own (net/http's defaults, the
// response header timeout at RequestTimeout, headers capped at MaxResponseHeaderBytes).
func New(opts Options) *Loader {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = opts.RequestTimeout
	tr.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	return &Loader{client: &http.Client{Transport: tr}, tr: tr, opts: opts}
}

// Close closes the loader's idle connections.
func (l *Loader) Close() { l.tr.CloseIdleConnections() }

// Fetched is what a download gave: the body and where it came from.
type Fetched struct {
	Body []byte
	// Final is the URL the body came from after redirects: what relative URIs in it resolve
	// against.
	Final *url.URL
	// Moved is where to ask for the resource next time: the URL asked, or where the permanent
	// redirects (301, 308) that began the chain sent it. A temporary redirect (302, 303, 307)
	// ends what counts: the server wants the URL before it asked again (RFC 9110 15.4).
	Moved *url.URL
}

// Get downloads u (only rng of it when rng is set) in one attempt. It fails with ErrTooLarge
// past limit bytes, and with a *StatusError for an answer other than 200 or 206. A server that
// ignores the range and sends the whole resource gets the range cut out of it. Its errors show
// no secret of an address (redact.Error): net/http's repeat the URL, query included.
func (l *Loader) Get(ctx context.Context, u *url.URL, rng *Range, limit int64) (Fetched, error) {
	f, err := l.get(ctx, u, rng, limit)
	return f, redact.Error(err, u.String())
}

func (l *Loader) get(ctx context.Context, u *url.URL, rng *Range, limit int64) (Fetched, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Fetched{}, err
	}
	req.Header.Set("User-Agent", "sluice")
	if rng != nil && rng.Length > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", rng.Start, rng.Start+rng.Length-1))
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return Fetched{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return Fetched{}, &StatusError{Code: resp.StatusCode}
	}
	if resp.ContentLength > limit {
		return Fetched{}, fmt.Errorf("declares %d bytes, over the cap of %d bytes: %w", resp.ContentLength, limit, ErrTooLarge)
	}
	// Read with the cap: memory follows the bytes that come, up to the cap and one more.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return Fetched{}, err
	}
	if int64(len(body)) > limit {
		return Fetched{}, fmt.Errorf("over the cap of %d bytes: %w", limit, ErrTooLarge)
	}
	if rng != nil && rng.Length > 0 && resp.StatusCode == http.StatusOK {
		if rng.Start+rng.Length > uint64(len(body)) {
			return Fetched{}, fmt.Errorf("byte range %d@%d beyond %d bytes", rng.Length, rng.Start, len(body))
		}
		body = body[rng.Start : rng.Start+rng.Length]
	}
	return Fetched{Body: body, Final: resp.Request.URL, Moved: moved(u, resp.Request)}, nil
}

// Head asks for the headers of u in one attempt (a HEAD request, its answer's body not read)
// and returns them; an answer other than 2xx is a *StatusError. Its errors show no secret of
// an address, as Get's.
func (l *Loader) Head(ctx context.Context, u *url.URL) (http.Header, error) {
	h, err := l.head(ctx, u)
	return h, redact.Error(err, u.String())
}

func (l *Loader) head(ctx context.Context, u *url.URL) (http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "sluice")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Code: resp.StatusCode}
	}
	return resp.Header, nil
}

// moved returns where the permanent redirects that began the chain ending with req sent u: the
// chain is read back from req, each request holding the redirect answer that made it.
func moved(u *url.URL, req *http.Request) *url.URL {
	var hops []*http.Request // the requests redirects made, last first
	for r := req; r != nil && r.Response != nil; r = r.Response.Request {
		hops = append(hops, r)
	}
	to := u
	for i := len(hops) - 1; i >= 0; i-- {
		switch hops[i].Response.StatusCode {
		case http.StatusMovedPermanently, http.StatusPermanentRedirect:
			to = hops[i].URL
		default:
			return to
		}
	}
	return to
}

// GetRetry downloads u as Get does, retrying what may succeed later (network errors, 404, 429,
// 5xx; see Retryable) with a growing pause until deadline; the error then wraps ErrStalled.
// Between attempts, failed (when set) is told of the error; when it answers false the wait ends
// with ErrGone.
func (l *Loader) GetRetry(ctx context.Context, u *url.URL, rng *Range, limit int64, deadline time.Time, failed func(error) bool) (Fetched, error) {
	delay := l.opts.RetryMin
	start := time.Now()
	for {
		f, err := l.Get(ctx, u, rng, limit)
		if err == nil || ctx.Err() != nil || !Retryable(err) {
			return f, err
		}
		if failed != nil && !failed(err) {
			return Fetched{}, ErrGone
		}
		if left := time.Until(deadline); left <= 0 {
			return Fetched{}, fmt.Errorf("%w: retried for %s: %w", ErrStalled, time.Since(start).Round(time.Millisecond), err)
		} else if delay > left {
			delay = left // one last try at the deadline
		}
		if err := Sleep(ctx, delay); err != nil {
			return Fetched{}, err
		}
		delay = min(2*delay, l.opts.RetryMax)
	}
}

// Retryable tells whether a failed download may succeed later: not a body over its cap, nor an
// answer other than 404, 429 or 5xx.
func Retryable(err error) bool {
	if errors.Is(err, ErrTooLarge) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusNotFound || se.Code == http.StatusTooManyRequests || se.Code >= 500
	}
	return true
}

// Sleep waits for d or until ctx ends (then its error).
func Sleep(ctx context.Context, d time.Duration) error {
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
