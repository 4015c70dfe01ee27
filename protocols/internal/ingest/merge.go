package ingest

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Pacing limits: a unit later than maxLate (a stall upstream) or earlier than maxEarly (a
// timestamp jump) moves the pacing clock instead of bursting or waiting.
const (
	maxLate  = time.Second
	maxEarly = 10 * time.Second
)

// source is one source as the merger sees it.
type source struct {
	name   string
	ch     <-chan Batch
	done   bool          // ch closed (the source ended), or given up on
	tracks []media.Track // as the source announced them; nil until then
	base   int           // stream track ID of the source's track 0
	queue  [][]*media.AccessUnit
	queued int
	shift  int64 // 90 kHz ticks added to the source's timestamps after discontinuities
	last   int64 // the latest timestamp taken, 90 kHz, shifted; -1 before the first
	lead   bool  // the source the pacing follows (the variant's, with the video)
	// changes are track changes announced with later units, applied when those units are
	// published: a source downloads ahead of what is published.
	changes []trackChange
}

// trackChange is a source's new tracks, from unit at on.
type trackChange struct {
	at     *media.AccessUnit
	tracks []media.Track
}

// Merger publishes the units of one or two sources (HLS renditions, DASH representations) into a Stream: it interleaves them by
// time and paces them to the wall clock, so that units arrive as they would from a live
// encoder. Timestamps are rebased to start at 0 at the first unit published (video before its
// first key frame is the stream publisher's to drop, as for every input).
type Merger struct {
	pub       *stream.Publisher
	log       *slog.Logger
	label     string // "hls" or "dash", for the logs
	maxQueued int    // units a source may download ahead of the pacing
	srcs      []*source

	set    bool // SetTracks done for the tracks announced
	tracks []media.Track
	origin int64 // 90 kHz timestamp published as 0
	anchor time.Time
	units  int64
}

// t90 returns a queued unit's DTS on the common 90 kHz timeline of the sources.
func t90(src *source, local int, au *media.AccessUnit) int64 {
	return media.Rescale(au.DTS, src.tracks[local].ClockRate, 90000)
}

// Run publishes until every source ended and its units are out (nil), or until errs
// brings a source's failure, or ctx ends.
func (m *Merger) Run(ctx context.Context, errs <-chan error) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if err := m.setTracks(); err != nil {
			return err
		}
		src, local := m.pick()
		var wait <-chan time.Time
		switch {
		case src != nil:
			d := time.Until(m.due(src, local))
			if d <= 0 {
				if err := m.publish(src, local); err != nil {
					return err
				}
				continue
			}
			timer.Reset(d)
			wait = timer.C
		case m.allDone():
			// A source that fails sends its error before it closes its channel, so the error
			// is waiting by now; the select below may have taken the close first (both ready).
			select {
			case err := <-errs:
				return err
			default:
			}
			return nil
		}
		select {
		case b, ok := <-m.accepting(0):
			m.take(m.srcs[0], b, ok)
		case b, ok := <-m.accepting(1):
			m.take(m.srcs[1], b, ok)
		case err := <-errs:
			return err
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		timer.Stop()
	}
}

// accepting returns source i's channel while it has room, else nil.
func (m *Merger) accepting(i int) <-chan Batch {
	if i >= len(m.srcs) || m.srcs[i].done || m.srcs[i].queued >= m.maxQueued {
		return nil
	}
	return m.srcs[i].ch
}

func (m *Merger) allDone() bool {
	for _, s := range m.srcs {
		if !s.done || s.queued > 0 {
			return false
		}
	}
	return true
}

// take queues a batch of src; ok false means the source ended.
func (m *Merger) take(src *source, b Batch, ok bool) {
	if !ok {
		src.done = true
		return
	}
	switch {
	case b.Tracks == nil || media.SameTracks(src.tracks, b.Tracks):
	case src.tracks == nil || len(b.Units) == 0 || len(b.Tracks) != len(src.tracks):
		src.tracks = slices.Clone(b.Tracks)
		for len(src.queue) < len(src.tracks) {
			src.queue = append(src.queue, nil)
		}
		m.set = false
	default:
		src.changes = append(src.changes, trackChange{at: b.Units[0], tracks: slices.Clone(b.Tracks)})
	}
	if src.tracks == nil {
		return
	}
	for i, au := range b.Units {
		if au.Track < 0 || au.Track >= len(src.tracks) {
			continue
		}
		if i == 0 && b.Disc && src.last >= 0 {
			// Continue the timeline one frame (at 25 fps) after the last unit taken.
			src.shift = src.last + 3600 - t90(src, au.Track, au)
			m.anchor = time.Time{}
		}
		if src.shift != 0 {
			sh := media.Rescale(src.shift, 90000, src.tracks[au.Track].ClockRate)
			au.DTS += sh
			au.PTS += sh
		}
		src.last = max(src.last, t90(src, au.Track, au))
		src.queue[au.Track] = append(src.queue[au.Track], au)
		src.queued++
	}
	if !m.set && src.queued >= m.maxQueued {
		// One source filled its queue while another has announced no track: stop waiting
		// for that one rather than for ever.
		for _, s := range m.srcs {
			if s.tracks == nil && !s.done {
				m.log.Warn(m.label+": source left out: no track found", "source", s.name)
				s.done = true
			}
		}
	}
}

// setTracks publishes the stream's tracks once every source announced its own, and again
// when one changed.
func (m *Merger) setTracks() error {
	if m.set {
		return nil
	}
	var tracks []media.Track
	for _, s := range m.srcs {
		if s.tracks == nil && !s.done {
			return nil
		}
		s.base = len(tracks)
		for _, t := range s.tracks {
			t.ID = len(tracks)
			tracks = append(tracks, t)
		}
	}
	if len(tracks) == 0 {
		return nil
	}
	if err := m.pub.SetTracks(tracks); err != nil {
		return err
	}
	if m.tracks == nil {
		m.log.Info(m.label+": tracks", "tracks", Describe(tracks))
	} else {
		m.log.Info(m.label+": tracks changed", "tracks", Describe(tracks))
	}
	m.tracks, m.set = tracks, true
	return nil
}

// pick returns the queued unit with the smallest timestamp, once the tracks are set.
func (m *Merger) pick() (*source, int) {
	if !m.set {
		return nil, 0
	}
	var best *source
	var bestLocal int
	var bestT int64
	for _, s := range m.srcs {
		for i, q := range s.queue {
			if len(q) == 0 || i >= len(s.tracks) {
				continue
			}
			if t := t90(s, i, q[0]); best == nil || t < bestT {
				best, bestLocal, bestT = s, i, t
			}
		}
	}
	return best, bestLocal
}

// due returns when the head unit of src's track local is to be published. Until the first
// unit is out, units are due at once; the first starts the clock. The leading source moves the clock when it runs late (a stall
// upstream) or jumps ahead.
func (m *Merger) due(src *source, local int) time.Time {
	t := t90(src, local, src.queue[local][0])
	now := time.Now()
	if m.units == 0 {
		m.origin, m.anchor = t, now
		return now
	}
	if m.anchor.IsZero() {
		m.anchor = now.Add(-ticks90(t - m.origin))
	}
	due := m.anchor.Add(ticks90(t - m.origin))
	if src.lead && (now.Sub(due) > maxLate || due.Sub(now) > maxEarly) {
		m.anchor = now.Add(-ticks90(t - m.origin))
		due = now
	}
	return due
}

// publish writes the head unit of src's track local, or drops it when it comes before the
// origin.
func (m *Merger) publish(src *source, local int) error {
	q := src.queue[local]
	au := q[0]
	q[0] = nil
	src.queue[local] = q[1:]
	src.queued--
	if len(src.changes) > 0 && src.changes[0].at == au {
		src.tracks = src.changes[0].tracks
		src.changes = src.changes[1:]
		m.set = false
		if err := m.setTracks(); err != nil {
			return err
		}
	}
	tr := src.tracks[local]
	t := t90(src, local, au)
	if t < m.origin {
		return nil
	}
	shift := media.Rescale(m.origin, 90000, tr.ClockRate)
	au.Track = src.base + local
	au.DTS -= shift
	au.PTS -= shift
	au.Arrival = time.Now()
	if err := m.pub.Write(au); err != nil {
		return err
	}
	m.units++
	return nil
}

// ticks90 converts 90 kHz ticks to a duration.
func ticks90(t int64) time.Duration { return time.Duration(t) * time.Second / 90000 }

// Batch is what a source hands to the Merger: the units of one segment.
type Batch struct {
	Tracks []media.Track // the source's tracks when first known or changed; else nil
	Units  []*media.AccessUnit
	Disc   bool // a discontinuity precedes these units
}

// NewMerger returns a Merger publishing through pub; label ("hls", "dash") prefixes its logs and
// maxQueued bounds the units each source may download ahead of the pacing.
func NewMerger(pub *stream.Publisher, log *slog.Logger, label string, maxQueued int) *Merger {
	return &Merger{pub: pub, log: log, label: label, maxQueued: maxQueued}
}

// AddSource adds a source before Run; the first added leads the pacing (the one with video).
func (m *Merger) AddSource(name string, ch <-chan Batch) {
	m.srcs = append(m.srcs, &source{name: name, ch: ch, last: -1, lead: len(m.srcs) == 0})
}

// Units counts the units published.
func (m *Merger) Units() int64 { return m.units }
