package rtsp

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"

	"github.com/sluicemedia/sluice/internal/redact"
)

// endpoint is the server a Pull or a Push talks to: its URL (as given, and parsed), the
// transport the URL asks for, the URL with its secrets hidden for logs and errors, and the log
// narrowed to it.
type endpoint struct {
	op        string // "pull" or "push", for errors
	raw       string
	u         *base.URL
	transport *gortsplib.Transport
	where     string
	log       *slog.Logger
}

// newEndpoint parses rawurl for op; a nil log is slog.Default().
func newEndpoint(op, rawurl string, log *slog.Logger) (endpoint, error) {
	if log == nil {
		log = slog.Default()
	}
	u, transport, err := parseURL(rawurl)
	if err != nil {
		return endpoint{}, fmt.Errorf("rtsp %s %s: %w", op, redact.URL(rawurl), redact.Error(err, rawurl))
	}
	where := redact.Parsed((*url.URL)(u))
	return endpoint{op: op, raw: rawurl, u: u, transport: transport, where: where, log: log.With("url", where)}, nil
}

// wrap says which operation on which server err comes from, without the URL's secrets (a
// library's error may quote the URL).
func (e endpoint) wrap(err error) error {
	return fmt.Errorf("rtsp %s %s: %w", e.op, e.where, redact.Error(err, e.raw))
}

// fail is wrap with the step that failed, or nil once ctx has ended: the error is then the
// end's, not the server's.
func (e endpoint) fail(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return e.wrap(fmt.Errorf("%s: %w", step, err))
}
