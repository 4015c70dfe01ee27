package httpts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Defaults of PullOptions.
const (
	// DefaultPullIdleTimeout fails a pull whose stream stops moving for 10 s.
	DefaultPullIdleTimeout = 10 * time.Second
	// DefaultHeaderTimeout bounds the wait for the response headers: 10 s.
	DefaultHeaderTimeout = 10 * time.Second
)

// maxResponseHeaderBytes caps the response headers of a pulled stream (64 KiB, bytes),
// instead of net/http's 10 MiB: a media server sends a few hundred bytes.
const maxResponseHeaderBytes = 64 << 10

// PullOptions tune Pull. The zero value uses the defaults.
type PullOptions struct {
	// URL is the stream to GET: http:// or https://.
	URL string
	// IdleTimeout fails the pull when the server sends less than 4 KiB in this long (it
	// stopped or trickles); default 10 s.
	IdleTimeout time.Duration
	// HeaderTimeout bounds the wait for the response headers; default 10 s.
	HeaderTimeout time.Duration
	// Log receives the connection's start and end; default slog.Default().
	Log *slog.Logger
}

// Pull GETs a continuous MPEG-TS or FLV stream (detected from its first bytes) from an
// http:// or https:// URL (opts.URL) and publishes it into s (INPUT_TYPE_HTTP_URL). It returns nil when
// the server ended the stream after media flowed or ctx ended, and an error otherwise: a
// status other than 200, nothing to publish, a stall longer than the idle timeout.
func Pull(ctx context.Context, s *stream.Stream, opts PullOptions) error {
	rawurl := opts.URL
	opt.Positive(&opts.IdleTimeout, DefaultPullIdleTimeout)
	opt.Positive(&opts.HeaderTimeout, DefaultHeaderTimeout)
	opt.Zero(&opts.Log, slog.Default())
	where := redact.URL(rawurl)
	log := opts.Log.With("input", "http", "url", where)
	err := pull(ctx, rawurl, s, opts, log)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		// net/http's errors repeat the URL, query included.
		return fmt.Errorf("http pull %s: %w", where, redact.Error(err, rawurl))
	}
	return nil
}

var errStalled = errors.New("stalled")

func pull(ctx context.Context, rawurl string, s *stream.Stream, opts PullOptions, log *slog.Logger) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawurl, nil)
	if err != nil {
		return err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("scheme %q, want http or https", req.URL.Scheme)
	}
	req.Header.Set("User-Agent", "sluice")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = opts.HeaderTimeout
	tr.MaxResponseHeaderBytes = maxResponseHeaderBytes
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server answered %s", resp.Status)
	}
	stall := time.AfterFunc(opts.IdleTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	body := newProgressReader(resp.Body, func() { stall.Reset(opts.IdleTimeout) })
	log.Info("connected", "content_type", resp.Header.Get("Content-Type"))
	units, err := ingestBody(body, s, log)
	log.Info("stream ended", "units", units, "error", redact.Error(err, rawurl))
	if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
		return fmt.Errorf("less than %d bytes received in %s: %w", minProgress, opts.IdleTimeout, cause)
	}
	return err
}
