package livepull

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// MaxBroken is how many unreadable segments in a row end a pull.
const MaxBroken = 3

// MissingTries is how many answers of 404 a listed segment gets, over at least its window
// (see Feed.Missing), before it is skipped; a 410 is skipped at its first answer.
const MissingTries = 3

// Feed hands the units of one source's segments (an HLS rendition, a DASH representation
// kind) to the merger, and counts the unreadable segments in a row.
type Feed struct {
	// Out is the source's channel to the merger.
	Out chan<- ingest.Batch
	// Log gets the "segment skipped" warnings; Name ("hls", "dash") prefixes them.
	Log  *slog.Logger
	Name string

	broken  int       // unreadable segments in a row
	fetched time.Time // when the origin last served a segment; zero before the first
}

// Segment is told what reading the segment at u gave: b, or err when it could not be read.
// An unreadable segment is skipped with a warning (the next key frame recovers) unless it is
// the MaxBroken-th in a row: then the error, naming u. A batch with no unit, no new tracks and
// no discontinuity is not sent (the merger would do nothing with it). Segment returns ctx's
// error when ctx ends before the merger takes the batch.
func (f *Feed) Segment(ctx context.Context, u *url.URL, b ingest.Batch, err error) error {
	f.fetched = time.Now()
	if err != nil {
		if f.broken++; f.broken >= MaxBroken {
			return fmt.Errorf("segment %s (%d unreadable in a row): %w", redact.Parsed(u), f.broken, err)
		}
		f.Log.Warn(f.Name+": segment skipped", "url", redact.Parsed(u), "error", err)
		return nil
	}
	f.broken = 0
	if b.Tracks == nil && len(b.Units) == 0 && !b.Disc {
		return nil
	}
	select {
	case f.Out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Missing watches the requests of one segment for answers that say the origin does not have it
// (404, 410), and decides when the segment is skipped rather than asked for again: a live origin
// sometimes lists a segment it never serves, or has already dropped. Feed.Missing makes one
// per segment; its Failed is httpget.GetRetry's failed callback, and Skip is told what GetRetry
// returned.
type Missing struct {
	feed          *Feed
	window, stall time.Duration
	first         time.Time
	tries         int
	last          error
	skip          bool
}

// Missing returns the watch of one segment's requests. window is how long answers of 404 go on
// before the segment may be skipped (its duration), stall the source's stall limit: a segment
// is skipped only while the origin served this source a segment within it, so that an origin
// that serves nothing still fails the pull at the stall limit.
func (f *Feed) Missing(window, stall time.Duration) *Missing {
	return &Missing{feed: f, window: window, stall: stall}
}

// IsMissing tells whether err is an answer saying the resource is not there: 404 or 410.
func IsMissing(err error) bool {
	return httpget.IsStatus(err, http.StatusNotFound, http.StatusGone)
}

// Failed is told of a failed request and tells whether to try again: false once the segment
// answered 404 MissingTries times over at least the window, or 410 once, and may be skipped.
// Other failures (5xx, timeouts, refused connections) are always tried again: they say the
// origin struggles, not that the segment is absent, and the stall limit bounds them.
func (m *Missing) Failed(err error) bool {
	if !IsMissing(err) {
		return true
	}
	m.last = err
	if m.tries++; m.tries == 1 {
		m.first = time.Now()
	}
	gone := httpget.IsStatus(err, http.StatusGone)
	if !gone && (m.tries < MissingTries || time.Since(m.first) < m.window) {
		return true
	}
	m.skip = !m.feed.fetched.IsZero() && time.Since(m.feed.fetched) < m.stall
	return !m.skip
}

// Skip is told what GetRetry returned for the segment at u, and tells whether to go on with
// the next segment: the segment was given up as missing (ErrGone after Failed said so, or a
// 410, which GetRetry does not retry). It then logs the skip once, at warn. The next batch is
// not marked a discontinuity: its timestamps are on the same clock, and the hole they leave is
// the media that is missing, so that a source skipping a segment its other source has stays in
// step with it.
func (m *Missing) Skip(u *url.URL, err error) bool {
	if httpget.IsStatus(err, http.StatusGone) && m.tries == 0 {
		m.Failed(err)
	}
	if !m.skip || !(errors.Is(err, httpget.ErrGone) || IsMissing(err)) {
		return false
	}
	m.feed.Log.Warn(m.feed.Name+": segment missing, skipped", "url", redact.Parsed(u), "error", m.last, "tries", m.tries)
	return true
}
