package segment

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
	// Now is the clock that stamps Segment.Created. Default time.Now.
	Now func() time.Time
}

func (o StoreOptions) withDefaults() StoreOptions {
	if o.Window <= 0 {
		o.Window = 60 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Store keeps the latest segments in memory: those of the window plus the grace. One
// Segmenter writes into it; any number of readers take Snapshots, which never block the
// writer (a snapshot is an immutable copy of a few pointers, made once per segment).
type Store struct {
	opts StoreOptions
	id   string

	mu      sync.Mutex
	segs    []*Segment
	added   int64
	changed chan struct{} // closed and replaced when a segment is added

	snap atomic.Pointer[Window]
}

// NewStore returns an empty Store.
func NewStore(opts StoreOptions) *Store {
	opts = opts.withDefaults()
	s := &Store{opts: opts, changed: make(chan struct{})}
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

// Snapshot returns the segments now kept. It does not block and is safe for concurrent use.
func (s *Store) Snapshot() *Window { return s.snap.Load() }

// Wait returns a channel closed when the next segment is added.
func (s *Store) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// add stores seg, drops what left the window and its grace, and wakes the waiters.
func (s *Store) add(seg *Segment) {
	seg.Created = s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segs = append(s.segs, seg)
	s.added++
	keep := len(lastCovering(s.segs, s.opts.Window)) + s.opts.Grace
	keep = min(keep, maxSegments)
	if drop := len(s.segs) - keep; drop > 0 {
		clear(s.segs[:drop])
		s.segs = s.segs[drop:]
	}
	// The snapshot gets its own slice: s.segs keeps appending in place.
	s.snap.Store(&Window{Segments: append([]*Segment(nil), s.segs...), Added: s.added})
	close(s.changed)
	s.changed = make(chan struct{})
}

// Window is an immutable snapshot of a Store.
type Window struct {
	// Segments are the segments kept, oldest first, with consecutive Seq.
	Segments []*Segment
	// Added counts the segments added since the store was made.
	Added int64
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
