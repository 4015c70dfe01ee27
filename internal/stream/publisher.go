package stream

import (
	"fmt"
	"slices"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Publisher is the one writer of a Stream, from Publish until Close. Its methods are safe for
// concurrent use, though units are ordered only as one goroutine writes them.
type Publisher struct {
	s       *Stream
	norm    normalizer // guarded by s.mu
	written int64      // units handed to the readers, guarded by s.mu
}

// Publish attaches a publisher. It fails with ErrBusy while another one is attached and with
// ErrClosed once the stream is closed. A publisher after an earlier one starts a new session:
// the next unit each existing reader receives has Discontinuity set.
func (s *Stream) Publish() (*Publisher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("stream %q: %w", s.name, ErrClosed)
	}
	if s.pub != nil {
		return nil, fmt.Errorf("stream %q: %w", s.name, ErrBusy)
	}
	p := &Publisher{s: s}
	p.norm.hardware = s.hardware
	s.pub = p
	s.since = s.opts.Now()
	if s.sessions > 0 {
		s.discs++
		for _, r := range s.readers {
			// A reader that has received nothing yet starts with this session: no gap for it.
			if r.w.started {
				r.w.disc = true
			}
		}
	}
	s.sessions++
	s.gop.reset(s.video)
	s.publishingChanged()
	return p, nil
}

// Stream returns the stream p writes into.
func (p *Publisher) Stream() *Stream { return p.s }

// SetTracks sets the stream's tracks and notifies watchers; tracks[i].ID must be i. Call it
// before the first Write. The GOP kept for new readers starts over.
func (p *Publisher) SetTracks(tracks []media.Track) error {
	s := p.s
	for i, t := range tracks {
		if t.ID != i {
			return fmt.Errorf("stream %q: track %d has ID %d", s.name, i, t.ID)
		}
	}
	tracks = slices.Clone(tracks)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != p {
		return fmt.Errorf("stream %q: publisher: %w", s.name, ErrClosed)
	}
	p.norm.setTracks(tracks)
	s.tracks = tracks
	s.video = slices.ContainsFunc(tracks, func(t media.Track) bool { return t.Codec.IsVideo() })
	s.gop.reset(s.video)
	close(s.tracksCh)
	s.tracksCh = make(chan struct{})
	return nil
}

// Write normalises au (see normalize.go) and hands it to every reader; from now on au is
// shared and read-only. It never waits for a reader and allocates nothing. Units that
// normalisation drops (video before the first key frame, unknown tracks) return nil, and so
// do units over Options.MaxUnitBytes, which are refused (counted in Stats.Refused, logged at
// most once a second): the later units of a refused unit's video track wait for its next key
// frame. It fails with ErrClosed once the publisher or the stream is closed. A nil unit is
// ignored.
func (p *Publisher) Write(au *media.AccessUnit) error {
	if au == nil {
		return nil
	}
	size := au.Size()
	s := p.s
	s.mu.Lock()
	if s.pub != p {
		s.mu.Unlock()
		return fmt.Errorf("stream %q: publisher: %w", s.name, ErrClosed)
	}
	if size > s.opts.MaxUnitBytes {
		s.refused++
		p.norm.awaitKey(au.Track)
		n, logIt := s.refusedLog.note(s.opts.Now())
		total := s.refused
		s.mu.Unlock()
		if logIt {
			s.log.Warn("unit refused: over the size limit", "budget", budgetUnitBytes.String(),
				"limit", s.opts.MaxUnitBytes, "bytes", size, "track", au.Track, "refused", n, "total", total)
		}
		return nil
	}
	if len(p.norm.tracks) > 0 && !p.norm.fix(au) {
		s.mu.Unlock()
		return nil
	}
	evicted, gopOver := s.fanOut(au, size)
	p.written++
	var gopLogged int64
	if gopOver != budgetNone {
		gopLogged, _ = s.gopLog.note(s.opts.Now())
	}
	s.mu.Unlock()
	for _, r := range evicted {
		st := r.Stats()
		r.log.Warn("reader closed: too slow", "dropped", st.Dropped, "lag_limit", s.opts.LagLimit,
			"unit_overflows", st.UnitOverflows, "byte_overflows", st.ByteOverflows)
	}
	if gopLogged > 0 {
		s.log.Warn("GOP too long to keep for new readers: they wait for the next key frame",
			"budget", gopOver.String(), "limit", gopOver.limit(&s.opts), "gops", gopLogged)
	}
	return nil
}

// SetHardware makes every later publisher of s use the tighter timestamp repair for hardware
// encoders (*_HARDWARE inputs read from a server module).
func (s *Stream) SetHardware(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hardware = on
}

// SetHardware selects the tighter timestamp repair for hardware encoders (*_HARDWARE inputs).
func (p *Publisher) SetHardware(on bool) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.norm.hardware = on
}

// Written counts the units of this session handed to the readers: those Write did not drop.
func (p *Publisher) Written() int64 {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.written
}

// Repairs counts the units of this session whose timestamps normalisation changed.
func (p *Publisher) Repairs() int64 {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.norm.repairs()
}

// Close detaches the publisher. Readers stay open and wait for the next one. Idempotent.
func (p *Publisher) Close() {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != p {
		return
	}
	s.pub = nil
	s.since = time.Time{}
	s.gop.reset(s.video)
	s.publishingChanged()
}
