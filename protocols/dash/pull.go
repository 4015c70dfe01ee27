package dash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// errNotStarted is returned for a dynamic MPD whose availabilityStartTime is ahead.
var errNotStarted = errors.New("the presentation has not started")

// PullOptions configure Pull: the URL of the MPD and the logger.
type PullOptions = livepull.Options

// Pull is the INPUT_TYPE_MPEG_DASH_URL input: it plays the MPEG-DASH presentation whose MPD
// is at o.URL (http or https) and publishes it into s, one publisher session: the
// highest-bandwidth video representation and one audio representation. A dynamic MPD is
// played from near its live edge and reloaded as it asks (minimumUpdatePeriod); a static one
// is played once from its start. It returns nil when the presentation ended (a static MPD
// played out, or a dynamic one turned static) after media flowed, or when ctx ended; an error
// when the MPD cannot be loaded, has no playable representation, ends before any media
// (wrapping ErrNoMedia), or stalls (no new segment for three segment durations).
func Pull(ctx context.Context, s *stream.Stream, o PullOptions) error {
	return pull(ctx, o.URL, s, o.Log, defaultConfig)
}

func pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger, cfg config) error {
	return livepull.Pull{Name: "dash", Document: "MPD", Config: cfg.Config}.Do(ctx, rawurl, s, log, cfg.run)
}

// run reads the MPD with the tunables cfg, follows its video and audio representations and
// publishes their units until the presentation ends, one fails or ctx ends.
func (cfg config) run(ctx context.Context, pr livepull.Primary, s *stream.Stream, log *slog.Logger) error {
	fetched := time.Now()
	m, err := parseManifest(pr.Body, pr.Final, fetched)
	if err != nil {
		return err
	}
	ld := pr.Loader
	// A dynamic MPD's times are on the origin's clock: learn how far it is from this
	// server's (UTCTiming), and read the MPD again on it when it is off.
	clk := &clock{ld: ld, log: log}
	if clk.sync(ctx, m, pr.Final, fetched) {
		if m, err = parseManifest(pr.Body, pr.Final, fetched.Add(clk.offset)); err != nil {
			return err
		}
		m.offset = clk.offset
	}
	now := time.Now().Add(m.offset)
	p, target := startPoint(m, now)
	if p == nil {
		return errNoRepresentation
	}
	// Segments addressed by the wall clock do not exist before availabilityStartTime: a
	// presentation announced ahead, or this server's clock far behind the origin's without a
	// UTCTiming to tell. Say so rather than stall on them.
	if r := cmp.Or(p.video, p.audio); m.dynamic && !r.hasTimeline {
		if ahead := m.ast.Add(p.start).Sub(now); ahead > cfg.stallLimit(r) {
			whose := "this server's clock (the MPD has no usable UTCTiming)"
			if clk.read {
				whose = "the origin's clock (UTCTiming)"
			}
			return fmt.Errorf("%w: availabilityStartTime %s is %s ahead of %s",
				errNotStarted, m.ast.UTC().Format(time.RFC3339), ahead.Round(time.Second), whose)
		}
	}
	log.Info("dash: MPD", "dynamic", m.dynamic, "periods", len(m.periods), "start_period", p.id,
		"start", target.Round(time.Millisecond), "minimum_update_period", m.mup)

	man := newManifests(m)
	man.clock = clk
	var followers []*follower
	lr := &livepull.Run{Name: "dash", MaxQueued: cfg.MaxQueued, NoMedia: ErrNoMedia}
	for _, kind := range []media.Kind{media.KindVideo, media.KindAudio} {
		if !hasKind(m, kind) {
			continue
		}
		f := &follower{kind: kind, man: man, ld: ld, cfg: cfg, log: log, p: p, target: target}
		followers = append(followers, f)
		lr.Sources = append(lr.Sources, livepull.Source{Name: kindName(kind), Run: func(ctx context.Context, out chan<- ingest.Batch) error {
			f.feed = livepull.Feed{Out: out, Log: log, Name: "dash"}
			return f.run(ctx)
		}})
	}
	if m.dynamic {
		// Reloads ask where permanent redirects sent the MPD; a temporary one is asked again.
		lr.Background = func(ctx context.Context) { man.refresh(ctx, ld, pr.Moved, cfg.minRefresh, log) }
	}
	lr.Ended = func() []any {
		segments := int64(0)
		for _, f := range followers {
			segments += f.count
		}
		return []any{"segments", segments}
	}
	return lr.Publish(ctx, s, log)
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
