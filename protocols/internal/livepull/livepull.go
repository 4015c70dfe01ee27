// Package livepull is the skeleton the HLS and DASH pulls share: the URL check, the loader and
// the first download, the error and log wrapping of a pull, and the run that publishes the
// renditions (or representations) it follows into the stream through one ingest.Merger until
// one ends, fails, or ctx ends; each source's feed to the merger (Feed: broken segments
// skipped, batches sent) and the conversion of fMP4 samples into units (TrackUnits). Each
// format keeps only its own playlist or manifest reading and its followers.
package livepull

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// Options configure a pull input (hls.PullOptions and dash.PullOptions are this type).
type Options struct {
	// URL is the playlist or MPD: http:// or https://.
	URL string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// Pull names a pull and holds its tunables.
type Pull struct {
	// Name is the format's name in logs and errors ("hls", "dash").
	Name string
	// Document names the primary document in errors ("playlist", "MPD").
	Document string
	// Config holds the tunables of the pull's loader.
	Config httpget.Config
}

// Primary is the first download of a pull: its loader, the URL asked, the one the body came
// from (after redirects) and the one to reload it from (after permanent redirects only; see
// httpget.Fetched), and the body (at most Config.MaxPlaylist bytes).
type Primary struct {
	Loader *httpget.PullLoader
	URL    *url.URL
	Final  *url.URL
	Moved  *url.URL
	Body   []byte
}

// RunFunc is a format's part of a pull: it reads the primary document and publishes what it
// follows into s until the presentation ends, it fails, or ctx ends.
type RunFunc func(ctx context.Context, pr Primary, s *stream.Stream, log *slog.Logger) error

// Do checks rawurl (http or https), narrows log to the pull (attribute Name+"_pull"), makes
// the pull's loader, downloads the primary document and calls run with it and s. It returns
// nil when ctx ended, whatever run returned; the error wrapped with Name and the URL (its
// secrets redacted) otherwise.
func (p Pull) Do(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger, run RunFunc) error {
	if log == nil {
		log = slog.Default()
	}
	u, err := url.Parse(rawurl)
	if err != nil {
		return fmt.Errorf("%s pull: %w", p.Name, redact.Error(err, rawurl))
	}
	where := redact.Parsed(u)
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%s pull %s: scheme %q, want http or https", p.Name, where, u.Scheme)
	}
	log = log.With(p.Name+"_pull", where)
	err = p.primary(ctx, u, s, log, run)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s pull %s: %w", p.Name, where, redact.Error(err, rawurl))
	}
	return nil
}

func (p Pull) primary(ctx context.Context, u *url.URL, s *stream.Stream, log *slog.Logger, run RunFunc) error {
	ld := httpget.NewPullLoader(p.Config)
	defer ld.Close()
	f, err := ld.Get(ctx, u, nil, p.Config.MaxPlaylist)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Document, err)
	}
	return run(ctx, Primary{Loader: ld, URL: u, Final: f.Final, Moved: f.Moved, Body: f.Body}, s, log)
}

// Source is one rendition or representation a pull follows.
type Source struct {
	// Name labels the source in the merger's logs.
	Name string
	// Run follows the source and sends its batches to out until it ends (nil), fails, or ctx
	// ends. out is closed after Run returns.
	Run func(ctx context.Context, out chan<- ingest.Batch) error
}

// Run is one publisher session of a pull.
type Run struct {
	// Name is the pull's name in logs and in the merger ("hls", "dash").
	Name string
	// MaxQueued bounds the units downloaded ahead of the pacing, per source.
	MaxQueued int
	// Sources are followed concurrently; the first to fail ends the run.
	Sources []Source
	// Background, when set, runs beside the sources until the run ends (a manifest refresh).
	Background func(ctx context.Context)
	// Ended, when set, gives more attributes for the "ended" log line; called after every
	// source returned.
	Ended func() []any
	// NoMedia is returned when every source ended before any unit was published.
	NoMedia error
}

// Publish opens a publisher session on s and merges the sources into it until they end
// (nil, or r.NoMedia when no unit flowed), one fails (its error), or ctx ends.
func (r *Run) Publish(ctx context.Context, s *stream.Stream, log *slog.Logger) error {
	pub, err := s.Publish()
	if err != nil {
		return err
	}
	defer pub.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := ingest.NewMerger(pub, log, r.Name, r.MaxQueued)
	errs := make(chan error, len(r.Sources))
	var wg sync.WaitGroup
	for _, src := range r.Sources {
		ch := make(chan ingest.Batch)
		m.AddSource(src.Name, ch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			if err := src.Run(ctx, ch); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	if r.Background != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Background(ctx)
		}()
	}
	err = m.Run(ctx, errs)
	cancel()
	wg.Wait()
	attrs := []any{"units", m.Units(), "error", err}
	if r.Ended != nil {
		attrs = append(r.Ended(), attrs...)
	}
	log.Info(r.Name+": ended", attrs...)
	if err != nil {
		return err
	}
	if m.Units() == 0 {
		return r.NoMedia
	}
	return nil
}
