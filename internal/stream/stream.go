package stream

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Stream is a named live stream: one publisher at a time writes into it, any number of readers
// read from it. It outlives its publishers. Safe for concurrent use.
type Stream struct {
	name string
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	closed   bool
	pub      *Publisher // nil while no publisher is attached
	since    time.Time  // when pub attached
	sessions int64      // publishers attached so far
	discs    int64
	tracks   []media.Track // read-only once set
	tracksCh chan struct{} // closed when tracks change or the stream closes
	pubCh    chan struct{} // closed when a publisher attaches or detaches, or the stream closes
	video    bool          // tracks include video
	readers  []*Reader
	gop      gop
	meter    meter
	bytesIn  int64
	unitsIn  int64
	hardware bool // publishers get the hardware-encoder timestamp repair

	// Budget counters, over the stream's life (see Stats).
	refused       int64
	dropped       int64
	unitOverflows int64
	byteOverflows int64
	evicted       int64
	gopOverflows  int64
	refusedLog    logLimit
	gopLog        logLimit
}

// New returns an empty Stream without a publisher.
func New(name string, opts Options) *Stream {
	opts = opts.withDefaults()
	s := &Stream{
		name:     name,
		opts:     opts,
		log:      opts.Log.With("stream", name),
		tracksCh: make(chan struct{}),
		pubCh:    make(chan struct{}),
	}
	s.gop.init(opts.QueueSize, opts.AudioPrefill, opts.QueueBytes)
	return s
}

// Name returns the stream's name.
func (s *Stream) Name() string { return s.name }

// Tracks returns the tracks the current or last publisher set. The slice is shared: do not
// modify it.
func (s *Stream) Tracks() []media.Track {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tracks
}

// WatchTracks returns the tracks, as Tracks does, and a channel closed when they change or the
// stream closes.
func (s *Stream) WatchTracks() ([]media.Track, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tracks, s.tracksCh
}

// WatchPublishing tells whether a publisher is attached and returns a channel closed when one
// attaches or detaches, or the stream closes.
func (s *Stream) WatchPublishing() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pub != nil, s.pubCh
}

// publishingChanged wakes the watchers of WatchPublishing. s.mu held.
func (s *Stream) publishingChanged() {
	close(s.pubCh)
	if !s.closed {
		s.pubCh = make(chan struct{})
	}
}

// Publishing tells whether a publisher is attached.
func (s *Stream) Publishing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pub != nil
}

// Discontinuities counts publisher sessions that followed an earlier one: each is a
// discontinuity every reader sees.
func (s *Stream) Discontinuities() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discs
}

// Stats returns a snapshot of the stream's input.
func (s *Stream) Stats() Stats {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	kbps, fps := s.meter.rates(now)
	return Stats{
		Publishing:      s.pub != nil,
		Since:           s.since,
		Readers:         len(s.readers),
		BytesIn:         s.bytesIn,
		UnitsIn:         s.unitsIn,
		Bitrate:         kbps,
		FPS:             fps,
		LastUnit:        s.meter.last(),
		Discontinuities: s.discs,
		Refused:         s.refused,
		Dropped:         s.dropped,
		UnitOverflows:   s.unitOverflows,
		ByteOverflows:   s.byteOverflows,
		Evicted:         s.evicted,
		GOPOverflows:    s.gopOverflows,
	}
}

// Close ends the stream: its publisher's writes fail with ErrClosed, and each reader gets the
// units it has queued, then io.EOF. Close is idempotent.
func (s *Stream) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.pub = nil
	s.since = time.Time{}
	readers := s.readers
	s.readers = nil
	s.gop.reset(s.video)
	close(s.tracksCh)
	s.publishingChanged()
	s.mu.Unlock()
	for _, r := range readers {
		r.finish(io.EOF)
	}
}

// isClosed tells whether Close was called.
func (s *Stream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// isVideo tells whether units of the track are video. s.mu held.
func (s *Stream) isVideo(track int) bool {
	return track >= 0 && track < len(s.tracks) && s.tracks[track].Codec.IsVideo()
}

// removeReader forgets r. s.mu held.
func (s *Stream) removeReader(r *Reader) {
	for i, x := range s.readers {
		if x == r {
			s.removeReaderAt(i)
			return
		}
	}
}

// removeReaderAt forgets the i-th reader; the last one takes its place. s.mu held.
func (s *Stream) removeReaderAt(i int) {
	last := len(s.readers) - 1
	s.readers[i] = s.readers[last]
	s.readers[last] = nil
	s.readers = s.readers[:last]
}
