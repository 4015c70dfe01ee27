package dash

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Pull is the INPUT_TYPE_MPEG_DASH_URL input: it plays the MPEG-DASH presentation whose MPD
// is at rawurl (http or https) and publishes it into s, one publisher session: the
// highest-bandwidth video representation and one audio representation. A dynamic MPD is
// played from near its live edge and reloaded as it asks (minimumUpdatePeriod); a static one
// is played once from its start. It returns nil when the presentation ended (a static MPD
// played out, or a dynamic one turned static) after media flowed, or when ctx ended; an error
// when the MPD cannot be loaded, has no playable representation, ends before any media
// (wrapping ErrNoMedia), or stalls (no new segment for three segment durations).
func Pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger) error {
	return pull(ctx, rawurl, s, log, defaultConfig)
}

func pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger, cfg config) error {
	if log == nil {
		log = slog.Default()
	}
	u, err := url.Parse(rawurl)
	if err != nil {
		return fmt.Errorf("dash pull: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("dash pull %s: scheme %q, want http or https", u.Redacted(), u.Scheme)
	}
	log = log.With("dash_pull", u.Redacted())
	err = run(ctx, u, s, log, cfg)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dash pull %s: %w", u.Redacted(), err)
	}
	return nil
}

// run loads the MPD, follows its video and audio representations and publishes their units
// until the presentation ends, one fails or ctx ends.
func run(ctx context.Context, u *url.URL, s *stream.Stream, log *slog.Logger, cfg config) error {
	ld := newLoader(cfg)
	defer ld.Close()

	b, final, err := ld.Get(ctx, u, nil, cfg.maxPlaylist)
	if err != nil {
		return fmt.Errorf("MPD: %w", err)
	}
	m, err := parseManifest(b, final, time.Now())
	if err != nil {
		return err
	}
	p, target := startPoint(m, time.Now())
	if p == nil {
		return errNoRepresentation
	}
	log.Info("dash: MPD", "dynamic", m.dynamic, "periods", len(m.periods), "start_period", p.id,
		"start", target.Round(time.Millisecond), "minimum_update_period", m.mup)

	pub, err := s.Publish()
	if err != nil {
		return err
	}
	defer pub.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	man := newManifests(m)
	mg := ingest.NewMerger(pub, log, "dash", cfg.maxQueued)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	var followers []*follower
	for _, kind := range []media.Kind{media.KindVideo, media.KindAudio} {
		if !hasKind(m, kind) {
			continue
		}
		ch := make(chan ingest.Batch)
		mg.AddSource(kindName(kind), ch)
		f := &follower{kind: kind, man: man, ld: ld, cfg: cfg, log: log, out: ch, p: p, target: target}
		followers = append(followers, f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			if err := f.run(ctx); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	if m.dynamic {
		wg.Add(1)
		go func() {
			defer wg.Done()
			man.refresh(ctx, ld, final, log)
		}()
	}
	err = mg.Run(ctx, errs)
	cancel()
	wg.Wait()
	segments := int64(0)
	for _, f := range followers {
		segments += f.count
	}
	log.Info("dash: ended", "segments", segments, "units", mg.Units(), "error", err)
	if err != nil {
		return err
	}
	if mg.Units() == 0 {
		return ErrNoMedia
	}
	return nil
}

// hasKind tells whether a period of m has a representation of kind k.
func hasKind(m *manifest, k media.Kind) bool {
	for _, p := range m.periods {
		if p.rep(k) != nil {
			return true
		}
	}
	return false
}
