package record

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// MemoryOptions configure a Memory.
type MemoryOptions struct {
	// Window is the media kept, in whole GOPs: memory_duration_sec. Default 300 s.
	Window time.Duration
	// Limit is the byte budget's rate, over the window, and cap. Default DefaultByteRate and
	// DefaultMaxMemoryBytes (1 GiB).
	budget.Limit
	// Log receives the evictions for the byte budget, at most one line a second. Default
	// slog.Default().
	Log *slog.Logger
	// Now is the clock of that limit. Default time.Now.
	Now func() time.Time
}

func (o MemoryOptions) withDefaults() MemoryOptions {
	opt.Positive(&o.Window, 300*time.Second)
	o.Limit = o.WithDefaults(DefaultMaxMemoryBytes)
	opt.Zero(&o.Log, slog.Default())
	opt.Clock(&o.Now)
	return o
}

// Budget returns the byte budget of a Memory with these options: ByteRate over the window and
// a GOP (memoryGOPSlack), at most MaxBytes.
func (o MemoryOptions) Budget() int64 {
	o = o.withDefaults()
	return o.Bytes(o.Window + memoryGOPSlack)
}

// MemoryStats are a Memory's figures.
type MemoryStats struct {
	// Bytes and Fragments are what is held now; Budget is the byte budget.
	Bytes     int64
	Fragments int
	Budget    int64
	// BudgetEvicted counts fragments evicted for the byte budget, whole GOPs at a time.
	BudgetEvicted int64
	// EarlyCuts counts fragments cut for their bytes before their second ended: at a key
	// frame past a quarter of MaxFragmentBytes, or anywhere at MaxFragmentBytes.
	EarlyCuts int64
	// Discarded counts fragments let go because nothing held started before them with a key
	// frame (after a GOP over the whole budget was evicted).
	Discarded int64
}

// Memory keeps the last Window of a stream as MP4 fragments, each starting at a video key frame
// (or about every second without video), read as one MP4 file through Open. A fragment is cut
// earlier at a key frame past a quarter of MaxFragmentBytes, and anywhere at MaxFragmentBytes;
// fragments leave in whole GOPs, when they fall out of the window or when what is held is over
// the byte budget (see MemoryOptions.Budget). Each publisher session is a SetTracks: a session with the same tracks
// continues the timeline (its timestamps are moved to follow the previous session after
// media.ContinuityGap); a change of tracks starts afresh. Write is for one goroutine; Open, Duration,
// Size and Stats may be called from any.
type Memory struct {
	opts   MemoryOptions
	window time.Duration
	budget int64

	// writer side
	frag  *fmp4.Fragmenter
	clk   clock
	video int
	seq   uint32
	open  time.Duration
	// timeline maps stream time to file time: from 0, rising across sessions.
	timeline media.Continuity
	tracks   []media.Track

	mu            sync.Mutex
	kept          []media.Track // the tracks of init, for Open
	init          *fmp4.FileInit
	frags         []memFrag
	bytes         int
	budgetEvicted int64
	earlyCuts     int64
	discarded     int64
	budgetLog     budget.LogLimit
}

type memFrag struct {
	data       []byte // moof + mdat; never written once held: snapshots read it without m.mu
	moof       int    // the bytes of data up to the end of its last moof: where the decode times are
	start, end time.Duration
	first      time.Duration // the earliest decode time in data (firstDecodeTime); -1 without one
	key        bool          // starts with a video key frame (or the stream has no video)
	ends       []int64       // by track: the end of its last sample in this fragment, in its clock; 0 without one
}

// NewMemory returns a Memory keeping window of media, with the default byte budget.
func NewMemory(window time.Duration) *Memory { return NewMemoryWith(MemoryOptions{Window: window}) }

// NewMemoryWith returns a Memory configured by opts.
func NewMemoryWith(opts MemoryOptions) *Memory {
	opts = opts.withDefaults()
	return &Memory{opts: opts, window: opts.Window, budget: opts.Budget(), video: -1,
		timeline: media.Continuity{Rate: int(time.Second), FromZero: true}}
}

// SetTracks starts a publisher session with tracks; the media kept so far is dropped when the
// tracks differ from the previous ones (their fragments would not fit the new init segment).
func (m *Memory) SetTracks(tracks []media.Track) error {
	if m.frag != nil && m.frag.Samples() > 0 {
		if err := m.flush(nil); err != nil {
			return err
		}
	}
	if m.tracks != nil && media.SameTracks(m.tracks, tracks) {
		m.clk = clock{tracks: tracks}
		return nil
	}
	init, err := fmp4.FileInitSegment(tracks)
	if err != nil {
		return err
	}
	frag, err := fmp4.NewFragmenter(tracks)
	if err != nil {
		return err
	}
	m.frag, m.tracks, m.clk, m.video = frag, tracks, clock{tracks: tracks}, -1
	m.timeline.Reset()
	for i, t := range tracks {
		if t.Codec.IsVideo() && m.video < 0 {
			m.video = i
		}
	}
	m.mu.Lock()
	m.init, m.kept, m.frags, m.bytes = init, tracks, nil, 0
	m.mu.Unlock()
	return nil
}

// Write adds one unit. The first unit after SetTracks should be a video key frame.
func (m *Memory) Write(au *media.AccessUnit) error {
	if m.frag == nil {
		return fmt.Errorf("record: memory: %w", fmp4.ErrUnknownTrack)
	}
	first := !m.clk.based
	if !m.clk.admit(au) {
		return nil
	}
	at := m.clk.at(au)
	off := time.Duration(m.timeline.Offset(int64(at), first))
	if first {
		m.frag.SetShift(off)
	}
	t := at + off
	cut := m.video < 0 && t-m.open >= FragmentDuration ||
		au.Track == m.video && au.Key && t-m.open >= FragmentDuration
	// Past a quarter of the cap, a key frame cuts too: fragments then start GOPs, which is
	// what eviction lets go of, rather than being cut anywhere at the cap.
	early := au.Track == m.video && au.Key && m.frag.Size() >= MaxFragmentBytes/4 ||
		m.frag.Size()+au.Size() > MaxFragmentBytes
	if m.frag.Samples() > 0 && (cut || early) {
		if !cut {
			m.mu.Lock()
			m.earlyCuts++
			m.mu.Unlock()
		}
		if err := m.flush(au); err != nil {
			return err
		}
	}
	if m.frag.Samples() == 0 {
		m.open = t
	}
	return m.frag.Add(au)
}

// flush moves the open fragment into the kept list and drops what fell out of the window or
// is over the byte budget.
func (m *Memory) flush(next *media.AccessUnit) error {
	m.seq++
	f, err := m.frag.Flush(m.seq, next)
	if err != nil || f == nil {
		return err
	}
	data := slices.Clone(f.Data[boxSize(f.Data):])
	// m.tracks are m.kept here: the writer's goroutine is the only one to set either.
	first := firstDecodeTime(data, m.tracks)
	last, _ := m.timeline.End()
	end := time.Duration(last)
	if next != nil {
		end = m.clk.at(next) + time.Duration(m.timeline.Current())
	}
	key := m.video < 0
	ends := make([]int64, len(m.tracks))
	for _, tf := range f.Tracks {
		if tf.Track == m.video {
			key = tf.Key
		}
		if tf.Track >= 0 && tf.Track < len(ends) {
			ends[tf.Track] = tf.BaseTime + tf.Duration
		}
	}
	m.mu.Lock()
	if len(m.frags) == 0 && !key {
		// What is held must start at a key frame.
		m.discarded++
		m.mu.Unlock()
		return nil
	}
	m.frags = append(m.frags, memFrag{data: data, moof: moofEnd(data), start: m.open, end: end, first: first, key: key, ends: ends})
	m.bytes += len(data)
	evicted := m.trim(end)
	var logged int64
	if evicted > 0 {
		logged, _ = m.budgetLog.Note(m.opts.Now(), int64(evicted))
	}
	held, total := m.bytes, m.budgetEvicted
	m.mu.Unlock()
	if logged > 0 {
		m.opts.Log.Warn("memory recording over its byte budget: oldest GOPs evicted", "budget", "memory_bytes",
			"limit", m.budget, "evicted", logged, "total", total, "kept_bytes", held)
	}
	return nil
}

// trim drops whole GOPs from the front while the rest still covers the window, then while
// what is held is over the byte budget; a single GOP over the budget goes too (the next key
// frame starts afresh). It returns the fragments evicted for the budget. m.mu held.
func (m *Memory) trim(end time.Duration) int {
	evicted := 0
	for {
		next := 1 // the first fragment of the second GOP
		for next < len(m.frags) && !m.frags[next].key {
			next++
		}
		switch {
		case next < len(m.frags) && end-m.frags[next].start >= m.window:
		case next < len(m.frags) && m.bytes > int(m.budget):
			evicted += next
		case next == len(m.frags) && m.bytes > int(m.budget):
			evicted += next
			m.dropFront(next)
			m.budgetEvicted += int64(evicted)
			return evicted
		default:
			m.budgetEvicted += int64(evicted)
			return evicted
		}
		m.dropFront(next)
	}
}

// dropFront lets the first n fragments go. m.mu held.
func (m *Memory) dropFront(n int) {
	for i := range n {
		m.bytes -= len(m.frags[i].data)
		m.frags[i] = memFrag{}
	}
	m.frags = m.frags[n:]
}

// Stats returns the memory's figures.
func (m *Memory) Stats() MemoryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MemoryStats{Bytes: int64(m.bytes), Fragments: len(m.frags), Budget: m.budget,
		BudgetEvicted: m.budgetEvicted, EarlyCuts: m.earlyCuts, Discarded: m.discarded}
}

// Duration returns the media time held.
func (m *Memory) Duration() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.frags) == 0 {
		return 0
	}
	return m.frags[len(m.frags)-1].end - m.frags[0].start
}

// Size returns the bytes held.
func (m *Memory) Size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}
