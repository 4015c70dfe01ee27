package dash

import (
	"context"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// manifests holds the latest MPD of a pull and tells the representations when a newer one
// arrives. A representation that needs one sooner than minimumUpdatePeriod (it ran out of
// segments, or a segment is late) nudges the refresher.
type manifests struct {
	mu      sync.Mutex
	cur     *manifest
	changed chan struct{} // closed when cur is replaced
	nudges  chan struct{}
	clock   *clock // the origin's clock; nil: this server's
}

func newManifests(m *manifest) *manifests {
	return &manifests{cur: m, changed: make(chan struct{}), nudges: make(chan struct{}, 1)}
}

// get returns the latest MPD and a channel closed when a newer one replaces it.
func (s *manifests) get() (*manifest, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.changed
}

func (s *manifests) set(m *manifest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = m
	close(s.changed)
	s.changed = make(chan struct{})
}

// offset is how far the origin's clock is ahead of this server's, as last measured.
func (s *manifests) offset() time.Duration {
	if s.clock == nil {
		return 0
	}
	return s.clock.offset
}

// nudge asks for a reload of the MPD.
func (s *manifests) nudge() {
	select {
	case s.nudges <- struct{}{}:
	default:
	}
}

// refresh reloads a dynamic MPD from u every minimumUpdatePeriod, and on a nudge (at most
// every minRefresh), until ctx ends or the MPD turns static. A reload redirected permanently
// (301, 308) moves u; the MPD's Location, when it has one, wins. A failed reload is logged and
// tried again later: the representations fail the pull if segments stop coming.
func (s *manifests) refresh(ctx context.Context, ld *loader, u *url.URL, minRefresh time.Duration, log *slog.Logger) {
	last := time.Now()
	failures := 0
	for {
		m, _ := s.get()
		if !m.dynamic {
			return
		}
		period := m.mup
		if period <= 0 {
			period = time.Hour // not to be updated: reloaded only when a representation asks
		}
		timer := time.NewTimer(time.Until(last.Add(max(period, minRefresh))))
		select {
		case <-timer.C:
		case <-s.nudges:
			timer.Stop()
			if err := httpget.Sleep(ctx, time.Until(last.Add(minRefresh))); err != nil {
				return
			}
		case <-ctx.Done():
			timer.Stop()
			return
		}
		last = time.Now()
		if m.location != nil {
			u = m.location // ISO 23009-1 5.3.1.2: updates come from the MPD's Location
		}
		f, err := ld.Get(ctx, u, nil, ld.MaxPlaylist)
		fetched := time.Now()
		if err == nil {
			u = f.Moved
			m, err = parseManifest(f.Body, f.Final, fetched.Add(s.offset()))
		}
		if err == nil && s.clock != nil {
			s.clock.sync(ctx, m, f.Final, fetched)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if failures++; failures == 1 || failures%10 == 0 {
				log.Warn("dash: MPD reload failed", "error", err, "failures", failures)
			}
			continue
		}
		failures = 0
		s.set(m)
	}
}

// startPoint returns the period playback starts in and the time in it, from the period's
// start: 0 in a static presentation; in a dynamic one, the live edge minus a delay of
// suggestedPresentationDelay, at least minBufferTime and two segments, within the time shift
// buffer. The live edge is the end of the timeline when there is one, else now.
func startPoint(m *manifest, now time.Time) (*period, time.Duration) {
	var p *period
	for _, q := range m.periods {
		if q.video == nil && q.audio == nil {
			continue
		}
		if p == nil || (m.dynamic && q.start <= now.Sub(m.ast)) {
			p = q
		}
		if !m.dynamic {
			break
		}
	}
	if p == nil || !m.dynamic {
		return p, 0
	}
	r := p.video
	if r == nil {
		r = p.audio
	}
	segDur := r.segDuration()
	delay := max(m.spd, m.minBuffer, 2*segDur)
	if m.tsbd > 0 {
		delay = max(min(delay, m.tsbd-segDur), segDur)
	}
	var edge time.Duration
	switch n := len(r.timeline); {
	case n > 0:
		last := r.timeline[n-1]
		edge = fromTimescale(satAdd(last.t, last.d)-min(r.pto, satAdd(last.t, last.d)), r.timescale)
	case !r.hasTimeline:
		edge = now.Sub(m.ast) - p.start
	}
	return p, max(edge-delay, 0)
}

// after returns the period that follows p in m, or nil.
func (m *manifest) after(p *period) *period {
	for _, q := range m.periods {
		if q.start > p.start || (q.index > p.index && q.start == p.start && q.id != p.id) {
			return q
		}
	}
	return nil
}

// find returns the period of m that is p (the same id, or with no ids the same start), or
// nil.
func (m *manifest) find(p *period) *period {
	for _, q := range m.periods {
		if (p.id != "" && q.id == p.id) || (p.id == "" && q.id == "" && q.start == p.start) {
			return q
		}
	}
	return nil
}

// rep returns the period's representation of a kind, or nil.
func (p *period) rep(k media.Kind) *rep {
	if k == media.KindVideo {
		return p.video
	}
	return p.audio
}
