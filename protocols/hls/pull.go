package hls

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Pull is the INPUT_TYPE_HLS_URL input: it plays the live HLS playlist at rawurl (http or
// https; a media playlist, or a multivariant playlist whose highest-bandwidth variant it
// plays) and publishes it into s, one publisher session. It returns nil when the playlist
// ended (EXT-X-ENDLIST) after media flowed, or when ctx ended; an error when the playlist
// cannot be loaded, has no supported track, ends before any media (wrapping ErrNoMedia), or
// stalls (no new segment for three target durations).
func Pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger) error {
	return pull(ctx, rawurl, s, log, defaultConfig)
}

func pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger, cfg config) error {
	if log == nil {
		log = slog.Default()
	}
	u, err := url.Parse(rawurl)
	if err != nil {
		return fmt.Errorf("hls pull: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("hls pull %s: scheme %q, want http or https", u.Redacted(), u.Scheme)
	}
	log = log.With("hls_pull", u.Redacted())
	err = run(ctx, u, s, log, cfg)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hls pull %s: %w", u.Redacted(), err)
	}
	return nil
}

// run loads the primary playlist, follows the chosen renditions and publishes their units
// until the playlist ends, a rendition fails or ctx ends.
func run(ctx context.Context, u *url.URL, s *stream.Stream, log *slog.Logger, cfg config) error {
	ld := newLoader(cfg)
	defer ld.Close()

	b, _, err := ld.Get(ctx, u, nil, cfg.maxPlaylist)
	if err != nil {
		return fmt.Errorf("playlist: %w", err)
	}
	pl, err := parsePlaylist(b)
	if err != nil {
		return fmt.Errorf("playlist: %w", err)
	}
	var first *playlist.Media
	mediaURL, audioURL := u, (*url.URL)(nil)
	switch p := pl.(type) {
	case *playlist.Media:
		first = p
	case *playlist.Multivariant:
		c, err := pickVariant(p)
		if err != nil {
			return err
		}
		if mediaURL, err = u.Parse(c.variant.URI); err != nil {
			return fmt.Errorf("variant %q: %w", c.variant.URI, err)
		}
		if c.audio != "" {
			if audioURL, err = u.Parse(c.audio); err != nil {
				return fmt.Errorf("audio rendition %q: %w", c.audio, err)
			}
		}
		log.Info("hls: variant chosen", "bandwidth", c.variant.Bandwidth, "resolution", c.variant.Resolution,
			"codecs", c.variant.Codecs, "variants", len(p.Variants), "audio_rendition", c.audio != "")
	default:
		return errors.New("playlist: neither a media nor a multivariant playlist")
	}

	pub, err := s.Publish()
	if err != nil {
		return err
	}
	defer pub.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := ingest.NewMerger(pub, log, "hls", cfg.maxQueued)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	start := func(name string, ru *url.URL, first *playlist.Media) {
		ch := make(chan ingest.Batch)
		m.AddSource(name, ch)
		r := newRendition(name, ru, ld, cfg, log, ch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			err := r.run(ctx, first)
			if err != nil && ctx.Err() == nil {
				errs <- err
			}
			log.Debug("hls: rendition ended", "rendition", name, "segments", r.segments, "error", err)
		}()
	}
	start("main", mediaURL, first)
	if audioURL != nil {
		start("audio", audioURL, nil)
	}
	err = m.Run(ctx, errs)
	cancel()
	wg.Wait()
	log.Info("hls: ended", "units", m.Units(), "error", err)
	if err != nil {
		return err
	}
	if m.Units() == 0 {
		return ErrNoMedia
	}
	return nil
}
