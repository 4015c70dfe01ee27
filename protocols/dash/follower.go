package dash

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// next is the segment a follower fetches next.
type next struct {
	number, t uint64
	avail     time.Time // when it becomes available (dynamic $Number$ addressing); zero: now
	mayEnd    bool      // a 404 ends the period (static $Number$ addressing without a known end)
}

// follower fetches the segments of one kind (video or audio): in each period the chosen
// representation of that kind, from the start point to the period's end, then the next
// period; in a dynamic presentation it waits for segments to be announced (SegmentTimeline)
// or to become available ($Number$ from availabilityStartTime).
type follower struct {
	kind media.Kind
	man  *manifests
	ld   *loader
	cfg  config
	log  *slog.Logger
	feed livepull.Feed // to the merger

	p       *period       // the period being played
	target  time.Duration // start time in p, for the first segment
	started bool          // a segment of p was fetched
	lastT   uint64        // SegmentTimeline: start time of the last segment fetched
	nextN   uint64        // $Number$: number of the next segment
	reader  *repReader
	readFor string // period and representation the reader's init segment is of
	fresh   time.Time
	count   int64
}

// run follows the presentation until it ends (nil), fails, or ctx ends.
func (f *follower) run(ctx context.Context) error {
	f.fresh = time.Now()
	for {
		m, changed := f.man.get()
		p := m.find(f.p)
		if p == nil {
			return fmt.Errorf("%s: period %q left the MPD", kindName(f.kind), f.p.id)
		}
		f.p = p
		r := p.rep(f.kind)
		var nx next
		var ok, ended bool
		if r != nil {
			nx, ok, ended = f.next(m, p, r)
		} else {
			ended = true
		}
		switch {
		case ok:
			err := f.fetch(ctx, m, p, r, nx)
			switch {
			case errors.Is(err, errEnded) && m.after(p) != nil:
				f.enter(m.after(p))
			case errors.Is(err, errEnded):
				return nil
			case err != nil && !errors.Is(err, httpget.ErrGone):
				return err
			}
		case ended && m.after(p) != nil:
			f.enter(m.after(p))
		case ended && !m.dynamic:
			return nil
		default:
			f.man.nudge()
			if err := f.wait(ctx, changed, r); err != nil {
				return err
			}
		}
	}
}

// enter moves on to period p, from its start.
func (f *follower) enter(p *period) { f.p, f.target, f.started = p, 0, false }

// stallLimit is how long a representation may go without a new segment.
func (f *follower) stallLimit(r *rep) time.Duration { return f.cfg.stallLimit(r) }

// stallLimit is how long r may bring no new segment: three of its segments, at least minStall.
func (cfg config) stallLimit(r *rep) time.Duration {
	d := 2 * time.Second
	if r != nil {
		d = r.segDuration()
	}
	return max(time.Duration(cfg.StallFactor)*d, cfg.minStall)
}

// wait waits for a newer MPD, failing once no new segment came for the stall limit.
func (f *follower) wait(ctx context.Context, changed <-chan struct{}, r *rep) error {
	limit := f.stallLimit(r)
	t := time.NewTimer(time.Until(f.fresh.Add(limit)))
	defer t.Stop()
	select {
	case <-changed:
		return nil
	case <-t.C:
		return fmt.Errorf("%s: no new segment for %s: %w", kindName(f.kind), limit, httpget.ErrStalled)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next returns the segment to fetch next in p; ended tells that p has no further segment.
func (f *follower) next(m *manifest, p *period, r *rep) (nx next, ok, ended bool) {
	if r.hasTimeline {
		tl := r.timeline
		i := 0
		if !f.started {
			target := satAdd(r.pto, toTimescale(f.target, r.timescale))
			for j, s := range tl {
				if s.t <= target {
					i = j
				}
			}
		} else {
			for i < len(tl) && tl[i].t <= f.lastT {
				i++
			}
		}
		if i < len(tl) {
			return next{number: tl[i].n, t: tl[i].t}, true, false
		}
		return next{}, false, !m.dynamic || m.after(p) != nil
	}
	if !f.started {
		f.nextN = satAdd(r.start, toTimescale(f.target, r.timescale)/r.duration)
	}
	n := f.nextN
	last, known := lastNumber(p, r)
	if known && n > last {
		return next{}, false, true
	}
	k := n - r.start
	nx = next{number: n, t: satAdd(r.pto, satMul(k, r.duration)), mayEnd: !m.dynamic && !known}
	if m.dynamic {
		end := fromTimescale(satMul(satAdd(k, 1), r.duration), r.timescale)
		nx.avail = m.ast.Add(p.start + min(end, math.MaxInt64-p.start)).Add(-m.offset) // on this server's clock
	}
	return nx, true, false
}

// lastNumber returns the number of the last segment of r in p, when it is known: endNumber,
// or the period's end.
func lastNumber(p *period, r *rep) (uint64, bool) {
	if r.duration == 0 {
		return 0, false
	}
	if r.end > 0 {
		return r.end, true
	}
	if p.end > p.start {
		span := toTimescale(p.end-p.start, r.timescale)
		if count := (span + r.duration - 1) / r.duration; count > 0 {
			return r.start + count - 1, true
		}
	}
	return 0, false
}

// fetch waits for the segment to become available, fetches it (and the representation's
// init segment when needed) and hands its units to the merger. A segment that keeps answering
// 404 (or 410) is skipped (livepull.Missing over missingWindow).
func (f *follower) fetch(ctx context.Context, m *manifest, p *period, r *rep, nx next) error {
	// A segment due further ahead than the stall limit comes from a broken MPD or clock: it
	// is tried then, and fails the pull if it is not there.
	if err := httpget.Sleep(ctx, min(time.Until(nx.avail), f.stallLimit(r))); err != nil {
		return err
	}
	deadline := time.Now().Add(f.stallLimit(r))
	if key := p.id + "\x00" + r.id; f.reader == nil || f.readFor != key {
		iu, err := r.url(r.init, 0, 0)
		if err != nil || r.init == "" {
			return fmt.Errorf("%s representation %q: initialization %q: %w", kindName(f.kind), r.id, redact.URL(r.init), redact.Error(err, r.init))
		}
		fi, err := f.ld.GetRetry(ctx, iu, nil, f.ld.MaxSegment, deadline, nil)
		if err != nil {
			return fmt.Errorf("init segment %s: %w", redact.Parsed(iu), err)
		}
		ti, err := parseInit(fi.Body, f.kind)
		if err != nil {
			return fmt.Errorf("init segment %s: %w", redact.Parsed(iu), err)
		}
		f.reader, f.readFor = newRepReader(ti, r.presentation(p)), key
		f.log.Info("dash: representation", "kind", kindName(f.kind), "id", r.id, "bandwidth", r.bandwidth, "codecs", r.codecs)
	}
	su, err := r.url(r.media, nx.number, nx.t)
	if err != nil {
		return fmt.Errorf("%s representation %q: %w", kindName(f.kind), r.id, redact.Error(err, r.media))
	}
	miss := f.feed.Missing(f.missingWindow(m, r), f.stallLimit(r))
	fs, err := f.ld.GetRetry(ctx, su, nil, f.ld.MaxSegment, deadline, func(err error) bool {
		return f.stillWanted(p, nx, err) && miss.Failed(err)
	})
	if !nx.mayEnd && miss.Skip(su, err) {
		// Given up as missing: on with the next, its hole kept; not fresh, so that skips
		// alone still end in a stall.
		f.started, f.lastT, f.nextN = true, nx.t, nx.number+1
		return nil
	}
	switch {
	case errors.Is(err, httpget.ErrGone) && nx.mayEnd:
		return errEnded
	case errors.Is(err, httpget.ErrGone):
		return err
	case err != nil:
		return fmt.Errorf("segment %s: %w", redact.Parsed(su), err)
	}
	f.started, f.lastT, f.nextN, f.fresh = true, nx.t, nx.number+1, time.Now()
	f.count++
	tracks, units, err := f.reader.segment(fs.Body)
	return f.feed.Segment(ctx, su, ingest.Batch{Tracks: tracks, Units: units}, err)
}

// missingWindow is how long a segment of r answers 404 before it may be skipped: its duration;
// twice that for a dynamic presentation addressed by the clock, whose segments are asked for
// the moment they are due (a packager a little late, or a clock a little off, is not a hole).
func (f *follower) missingWindow(m *manifest, r *rep) time.Duration {
	if m.dynamic && !r.hasTimeline {
		return 2 * r.segDuration()
	}
	return r.segDuration()
}

// stillWanted is told of a failed segment request: it asks for a newer MPD and tells whether
// the segment is still expected (false once the MPD ended before it).
func (f *follower) stillWanted(p *period, nx next, err error) bool {
	if !isNotFound(err) {
		return true
	}
	if nx.mayEnd {
		return false
	}
	f.man.nudge()
	m, _ := f.man.get()
	q := m.find(p)
	if q == nil || m.dynamic {
		return q != nil
	}
	r := q.rep(f.kind)
	if r == nil {
		return false
	}
	if r.hasTimeline {
		return len(r.timeline) > 0 && nx.t <= r.timeline[len(r.timeline)-1].t
	}
	last, known := lastNumber(q, r)
	return !known || nx.number <= last
}

// errEnded ends a follower whose static presentation ran out of segments.
var errEnded = errors.New("ended")

func isNotFound(err error) bool {
	return httpget.IsStatus(err, http.StatusNotFound, http.StatusGone)
}
