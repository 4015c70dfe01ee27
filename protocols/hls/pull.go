package hls

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// PullOptions configure Pull: the URL of the playlist and the logger.
type PullOptions = livepull.Options

// Pull is the INPUT_TYPE_HLS_URL input: it plays the live HLS playlist at o.URL (http or
// https; a media playlist, or a multivariant playlist whose highest-bandwidth variant it
// plays) and publishes it into s, one publisher session. It returns nil when the playlist
// ended (EXT-X-ENDLIST) after media flowed, or when ctx ended; an error when the playlist
// cannot be loaded, has no supported track, ends before any media (wrapping ErrNoMedia), or
// stalls (no new segment for three target durations).
func Pull(ctx context.Context, s *stream.Stream, o PullOptions) error {
	return pull(ctx, o.URL, s, o.Log, defaultConfig)
}

func pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger, cfg config) error {
	return livepull.Pull{Name: "hls", Document: "playlist", Config: cfg.Config}.Do(ctx, rawurl, s, log, cfg.run)
}

// run reads the primary playlist with the tunables cfg, follows the chosen renditions and
// publishes their units until the playlist ends, a rendition fails or ctx ends.
func (cfg config) run(ctx context.Context, pr livepull.Primary, s *stream.Stream, log *slog.Logger) error {
	pl, err := parsePlaylist(pr.Body)
	if err != nil {
		return fmt.Errorf("playlist: %w", err)
	}
	// URIs resolve against the URL the playlist came from after redirects; a media playlist
	// reloads from where permanent redirects sent it.
	u, ld := pr.Final, pr.Loader
	var first []byte
	mediaURL, audioURL := pr.Moved, (*url.URL)(nil)
	switch p := pl.(type) {
	case *playlist.Media:
		first = pr.Body
	case *playlist.Multivariant:
		c, err := pickVariant(p)
		if err != nil {
			return err
		}
		if mediaURL, err = u.Parse(c.variant.URI); err != nil {
			return fmt.Errorf("variant %q: %w", redact.URL(c.variant.URI), redact.Error(err, c.variant.URI))
		}
		if c.audio != "" {
			if audioURL, err = u.Parse(c.audio); err != nil {
				return fmt.Errorf("audio rendition %q: %w", redact.URL(c.audio), redact.Error(err, c.audio))
			}
		}
		log.Info("hls: variant chosen", "bandwidth", c.variant.Bandwidth, "resolution", c.variant.Resolution,
			"codecs", c.variant.Codecs, "variants", len(p.Variants), "audio_rendition", c.audio != "")
	default:
		return errors.New("playlist: neither a media nor a multivariant playlist")
	}

	source := func(name string, ru *url.URL, first []byte) livepull.Source {
		return livepull.Source{Name: name, Run: func(ctx context.Context, out chan<- ingest.Batch) error {
			r := newRendition(name, ru, ld, cfg, log, out)
			err := r.run(ctx, first, pr.Final)
			log.Debug("hls: rendition ended", "rendition", name, "segments", r.segments, "error", err)
			return err
		}}
	}
	lr := &livepull.Run{Name: "hls", MaxQueued: cfg.MaxQueued, NoMedia: ErrNoMedia,
		Sources: []livepull.Source{source("main", mediaURL, first)}}
	if audioURL != nil {
		lr.Sources = append(lr.Sources, source("audio", audioURL, nil))
	}
	return lr.Publish(ctx, s, log)
}
