package segment

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/opt"
)

// maxSegments bounds the store whatever the segment durations.
const maxSegments = 2000

// StoreOptions configure a Store.
type StoreOptions struct {
	// Window is the media duration that stays listed: the larger of the HLS and DASH playlist
	// lengths (hls_fragment_length, dash_fragment_length). Default 60 s.
	Window time.Duration
	// Grace is the number of segments kept after they leave the window, for clients that
	// fetch a little late. Default 2.
	Grace int
	// Target is the fragment size of the segments, for the byte budget. Default 3 s.
	Target time.Duration
	// Limit is the byte budget's rate, over the media kept, and cap. Default DefaultByteRate
	// and DefaultMaxStoreBytes (2 GiB).
	budget.Limit
	// Log receives the evictions for the byte budget, at most one line a second. Default
	// slog.Default().
	Log *slog.Logger
	// Now is the clock that stamps Segment.Created. Default time.Now.
	Now func() time.Time
}

func (o StoreOptions) withDefaults() StoreOptions {
	opt.Positive(&o.Window, 60*time.Second)
	opt.Positive(&o.Grace, 2)
	opt.Positive(&o.Target, 3*time.Second)
	o.Limit = o.WithDefaults(DefaultMaxStoreBytes)
	opt.Zero(&o.Log, slog.Default())
	opt.Clock(&o.Now)
	return o
}

// Budget returns the byte budget of a store with these options: ByteRate over the media the
// time rules keep when segments last Target (the window, at least three segments, the grace
// and the segment that straddles the window's start), at most MaxBytes.
func (o StoreOptions) Budget() int64 {
	o = o.withDefaults()
	span := max(o.Window, 3*o.Target) + time.Duration(o.Grace+1)*o.Target
	return o.Bytes(span)
}

// Store keeps the latest segments in memory: those of the window plus the grace, within a
// byte budget (StoreOptions.Budget): past it the oldest segments go, whatever their time.
// One Segmenter writes into it; any number of readers take Snapshots, which never block the
// writer (a snapshot is an immutable copy of a few pointers, made once per segment).
type Store struct {
	opts   StoreOptions
	id     string
	budget int64

	mu            sync.Mutex
	segs          []*Segment
	bytes         int64 // of segs' Data
	added         int64
	evicted       int64 // segments that left the window and its grace
	budgetEvicted int64 // segments evicted for the byte budget
	budgetLog     budget.LogLimit
	changed       chan struct{} // closed and replaced when a segment is added
	partTarget    time.Duration // see Window.PartTarget

	snap atomic.Pointer[Window]
}

// StoreStats is a snapshot of a Store's figures.
type StoreStats struct {
	// Segments and Bytes are what is kept now.
	Segments int
	Bytes    int64
	// Budget is the byte budget.
	Budget int64
	// Added counts the segments added.
	Added int64
	// Evicted counts the segments that left the window and its grace.
	Evicted int64
	// BudgetEvicted counts the segments evicted earlier, for the byte budget.
	BudgetEvicted int64
}

// NewStore returns an empty Store.
func NewStore(opts StoreOptions) *Store {
	opts = opts.withDefaults()
	s := &Store{opts: opts, budget: opts.Budget(), changed: make(chan struct{})}
	// File names carry the store's identity: a restarted player writes new names, so that
	// caches that keep segments forever never mix two runs.
	s.id = strconv.FormatInt(opts.Now().UnixMilli(), 36)
	s.snap.Store(&Window{})
	return s
}

// ID returns a short token unique to this store, for file names.
func (s *Store) ID() string { return s.id }

// Window returns the window length the store keeps listed.
func (s *Store) Window() time.Duration { return s.opts.Window }

// Budget returns the byte budget of the segments kept.
func (s *Store) Budget() int64 { return s.budget }

// Stats returns the store's figures. Safe for concurrent use.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return StoreStats{Segments: len(s.segs), Bytes: s.bytes, Budget: s.budget, Added: s.added,
		Evicted: s.evicted, BudgetEvicted: s.budgetEvicted}
}

// Snapshot returns the segments now kept. It does not block and is safe for concurrent use.
func (s *Store) Snapshot() *Window { return s.snap.Load() }

// Wait returns a channel closed when the next segment is added.
func (s *Store) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// add stores seg, drops what left the window and its grace, then the oldest segments while
// the rest is over the byte budget (the newest always stays), and wakes the waiters.
func (s *Store) add(seg *Segment) {
	seg.Created = s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segs = append(s.segs, seg)
	s.bytes += int64(len(seg.Data))
	s.added++
	keep := len(lastCovering(s.segs, s.opts.Window)) + s.opts.Grace
	keep = min(keep, maxSegments)
	drop := max(len(s.segs)-keep, 0)
	s.evicted += int64(drop)
	for _, old := range s.segs[:drop] {
		s.bytes -= int64(len(old.Data))
	}
	over := 0
	for drop+over < len(s.segs)-1 && s.bytes > s.budget {
		s.bytes -= int64(len(s.segs[drop+over].Data))
		over++
	}
	if over > 0 {
		s.budgetEvicted += int64(over)
		if n, ok := s.budgetLog.Note(seg.Created, int64(over)); ok {
			s.opts.Log.Warn("segment store over its byte budget: oldest segments evicted", "budget", "window_bytes",
				"limit", s.budget, "evicted", n, "total", s.budgetEvicted, "kept_bytes", s.bytes)
		}
	}
	if drop += over; drop > 0 {
		clear(s.segs[:drop])
		s.segs = s.segs[drop:]
	}
	// The snapshot gets its own slice: s.segs keeps appending in place.
	s.snap.Store(&Window{Segments: append([]*Segment(nil), s.segs...), Added: s.added, PartTarget: s.partTarget})
	close(s.changed)
	s.changed = make(chan struct{})
}

// publish makes open the segment in progress of the snapshots (nil for none) and wakes the
// waiters: a low-latency segmenter calls it at every partial segment. The segments kept do
// not change.
func (s *Store) publish(open *Segment) {
	if open != nil {
		open.Created = s.opts.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.snap.Load()
	s.snap.Store(&Window{Segments: prev.Segments, Added: prev.Added, Open: open, PartTarget: s.partTarget})
	close(s.changed)
	s.changed = make(chan struct{})
}

// setPartTarget records the longest partial segment the segmenter cuts (Window.PartTarget),
// from the next snapshot on.
func (s *Store) setPartTarget(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partTarget = d
}

// Window is an immutable snapshot of a Store.
type Window struct {
	// Segments are the segments kept, oldest first, with consecutive Seq.
	Segments []*Segment
	// Added counts the segments added since the store was made.
	Added int64
	// Open is the low-latency segment in progress, with the partial segments made so far
	// (SegmenterOptions.PartTarget), or nil. It is not among Segments and not counted in
	// Added; the next segment added replaces it.
	Open *Segment
	// PartTarget is the longest a partial segment of the store's segmenter lasts: its
	// SegmenterOptions.PartTarget cut down to whole frames (see Segmenter.partTarget); 0
	// while unknown, and for classic segments.
	PartTarget time.Duration
}

// Partial returns partial segment i of segment seq, kept or in progress, with its segment.
func (w *Window) Partial(seq int64, i int) (*Segment, *Partial, bool) {
	s, ok := w.Segment(seq)
	if !ok && w.Open != nil && w.Open.Seq == seq {
		s, ok = w.Open, true
	}
	if !ok || i < 0 || i >= len(s.Partials) {
		return nil, nil, false
	}
	return s, &s.Partials[i], true
}

// Last returns the newest segments that cover d of media, or all when they cover less: the
// segments a playlist of length d lists. It never covers less than three times the longest
// segment (RFC 8216 6.2.2), when there is that much.
func (w *Window) Last(d time.Duration) []*Segment { return lastCovering(w.Segments, d) }

func lastCovering(segs []*Segment, d time.Duration) []*Segment {
	var longest time.Duration
	for _, s := range segs {
		longest = max(longest, s.Duration)
	}
	need := max(d, 3*longest)
	var total time.Duration
	for i := len(segs) - 1; i >= 0; i-- {
		total += segs[i].Duration
		if total >= need {
			return segs[i:]
		}
	}
	return segs
}

// Segment returns the kept segment numbered seq.
func (w *Window) Segment(seq int64) (*Segment, bool) {
	if len(w.Segments) == 0 {
		return nil, false
	}
	i := seq - w.Segments[0].Seq
	if i < 0 || i >= int64(len(w.Segments)) {
		return nil, false
	}
	return w.Segments[i], true
}

// Init returns the init segment of a version some kept segment needs.
func (w *Window) Init(version int) (*Init, bool) {
	for i := len(w.Segments) - 1; i >= 0; i-- {
		if in := w.Segments[i].Init; in.Version == version {
			return in, true
		}
	}
	return nil, false
}

// Newest returns the last segment added, or nil.
func (w *Window) Newest() *Segment {
	if len(w.Segments) == 0 {
		return nil
	}
	return w.Segments[len(w.Segments)-1]
}
