package httpts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/tsmux"
)

// Send limits.
const (
	// sendStall fails a send whose server accepts no bytes for this long.
	sendStall = 10 * time.Second
	// answerWait is how long Send waits for the server's answer after ending the body.
	answerWait = 5 * time.Second
)

// SendOptions configure Send.
type SendOptions struct {
	// URL is where to send: http:// or https://.
	URL string
	// Method is POST or PUT; empty is POST.
	Method string
	// Log gets the output's messages. Default: slog.Default().
	Log *slog.Logger
}

// Send muxes the reader's units into MPEG-TS and sends them as the body of one chunked HTTP
// request (OUTPUT_TYPE_HTTP_URL) to opts.URL, with opts.Method. tracks are the stream's
// tracks when the reader was opened; timestamps keep increasing across the stream's
// discontinuities. Send ends the body and returns nil when ctx ends or the stream closes; it
// fails when the server answers before that (a status other than 2xx quoted), refuses the
// connection, or accepts no bytes for 10 s.
func Send(ctx context.Context, r *stream.Reader, tracks []media.Track, opts SendOptions) error {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if err := send(ctx, opts.URL, opts.Method, r, tracks, opts.Log); err != nil {
		// net/http's errors repeat the URL, query included.
		return fmt.Errorf("http send %s: %w", redact.URL(opts.URL), redact.Error(err, opts.URL))
	}
	return nil
}

func send(ctx context.Context, rawurl, method string, r *stream.Reader, tracks []media.Track, log *slog.Logger) error {
	method = strings.ToUpper(method)
	if method == "" {
		method = http.MethodPost
	}
	if method != http.MethodPost && method != http.MethodPut {
		return fmt.Errorf("method %q, want POST or PUT", method)
	}
	log = log.With("output", "http", "url", redact.URL(rawurl))
	out, err := tsmux.New(r, tracks, log)
	if err != nil {
		return err
	}
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(reqCtx, method, rawurl, pr)
	if err != nil {
		return err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("scheme %q, want http or https", req.URL.Scheme)
	}
	req.ContentLength = -1 // chunked
	req.Header.Set("Content-Type", "video/mp2t")
	req.Header.Set("User-Agent", "sluice")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()

	answered := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				err = fmt.Errorf("server answered %s", resp.Status)
			}
		}
		// Unblocks a write the transport will never read.
		pr.CloseWithError(errAnswered)
		answered <- err
	}()

	var stalled atomic.Bool
	stall := time.AfterFunc(sendStall, func() { stalled.Store(true); cancel() })
	stall.Stop()
	err = pump(ctx, out, pw, stall)
	if err == nil {
		// The stream ended or ctx ended: finish the body and take the answer.
		_ = pw.Close()
		t := time.AfterFunc(answerWait, cancel)
		aerr := <-answered
		t.Stop()
		if aerr != nil && !errors.Is(aerr, context.Canceled) {
			log.Warn("no clean answer after the end of the body", "error", redact.Error(aerr, rawurl))
		}
		return nil
	}
	_ = pw.CloseWithError(err)
	if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, errAnswered) {
		// The request ended first: its result says why.
		aerr := <-answered
		if stalled.Load() {
			return fmt.Errorf("server accepted no bytes for %s", sendStall)
		}
		if aerr != nil {
			return aerr
		}
		return errors.New("server answered before the end of the stream")
	}
	cancel()
	<-answered
	return err
}

// errAnswered closes the body pipe once the request is over.
var errAnswered = errors.New("request over")

// pump muxes units into the body until ctx ends or the stream closes (nil) or a write fails.
func pump(ctx context.Context, out *tsmux.Muxer, w io.Writer, stall *time.Timer) error {
	return out.Run(ctx, nil, func(buf []byte, _ int64, _ *media.AccessUnit) ([]byte, error) {
		stall.Reset(sendStall)
		_, err := w.Write(buf)
		stall.Stop()
		return buf[:0], err
	})
}
