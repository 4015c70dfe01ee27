package record

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// Memory keeps the last Window of a stream as MP4 fragments, each starting at a video key frame
// (or about every second without video), and returns them as one MP4 file. Each publisher
// session is a SetTracks: a session with the same tracks continues the timeline (its timestamps
// are moved to follow the previous session after sessionGap); a change of tracks starts afresh. Write is for one goroutine; MP4 and Duration may be called from any.
type Memory struct {
	window time.Duration

	// writer side
	frag   *fmp4.Fragmenter
	clk    clock
	video  int
	seq    uint32
	open   time.Duration
	offset time.Duration // file time of the session's first unit
	last   time.Duration // file time at which the last unit written ends (about)
	tracks []media.Track

	mu    sync.Mutex
	kept  []media.Track // the tracks of init, for MP4
	init  []byte
	frags []memFrag
	bytes int
}

type memFrag struct {
	data       []byte // moof + mdat
	start, end time.Duration
}

// NewMemory returns a Memory keeping window of media.
func NewMemory(window time.Duration) *Memory { return &Memory{window: window, video: -1} }

// sessionGap separates two sessions on a memory recording's timeline.
const sessionGap = 100 * time.Millisecond

// SetTracks starts a publisher session with tracks; the media kept so far is dropped when the
// tracks differ from the previous ones (their fragments would not fit the new init segment).
func (m *Memory) SetTracks(tracks []media.Track) error {
	if m.frag != nil && m.frag.Samples() > 0 {
		if err := m.flush(nil); err != nil {
			return err
		}
	}
	if m.tracks != nil && sameTracks(m.tracks, tracks) {
		m.clk = clock{tracks: tracks}
		m.offset = m.last + sessionGap
		return nil
	}
	init, err := fmp4.InitSegment(tracks)
	if err != nil {
		return err
	}
	frag, err := fmp4.NewFragmenter(tracks)
	if err != nil {
		return err
	}
	m.frag, m.tracks, m.clk, m.video = frag, tracks, clock{tracks: tracks}, -1
	m.offset, m.last = 0, 0
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

// sameTracks tells whether two track lists describe the same codecs and parameters.
func sameTracks(a, b []media.Track) bool {
	return slices.EqualFunc(a, b, func(x, y media.Track) bool {
		return x.ID == y.ID && x.Codec == y.Codec && x.ClockRate == y.ClockRate &&
			string(x.Params.SPS) == string(y.Params.SPS) && string(x.Params.PPS) == string(y.Params.PPS) &&
			string(x.Params.VPS) == string(y.Params.VPS) && string(x.Params.AudioConfig) == string(y.Params.AudioConfig) &&
			x.Params.SampleRate == y.Params.SampleRate && x.Params.Channels == y.Params.Channels
	})
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
	if first {
		m.frag.SetShift(m.offset - m.clk.base)
	}
	t := m.clk.at(au) - m.clk.base + m.offset
	m.last = max(m.last, t)
	cut := m.video < 0 && t-m.open >= FragmentDuration ||
		au.Track == m.video && au.Key && t-m.open >= FragmentDuration
	if m.frag.Samples() > 0 && cut {
		if err := m.flush(au); err != nil {
			return err
		}
	}
	if m.frag.Samples() == 0 {
		m.open = t
	}
	return m.frag.Add(au)
}

// flush moves the open fragment into the kept list and drops what fell out of the window.
func (m *Memory) flush(next *media.AccessUnit) error {
	m.seq++
	f, err := m.frag.Flush(m.seq, next)
	if err != nil || f == nil {
		return err
	}
	data := slices.Clone(f.Data[boxSize(f.Data):])
	end := m.last
	if next != nil {
		end = m.clk.at(next) - m.clk.base + m.offset
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frags = append(m.frags, memFrag{data: data, start: m.open, end: end})
	m.bytes += len(data)
	// Keep whole fragments covering the window: drop the oldest while the rest still covers it.
	for len(m.frags) > 1 && end-m.frags[1].start >= m.window {
		m.bytes -= len(m.frags[0].data)
		m.frags[0] = memFrag{}
		m.frags = m.frags[1:]
	}
	return nil
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

// MP4 returns what is held as one fragmented MP4 file starting at time zero (init segment and
// fragments; the open fragment, a GOP at most, is not included). It returns nil when nothing is held.
func (m *Memory) MP4() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.frags) == 0 {
		return nil
	}
	out := make([]byte, 0, len(m.init)+m.bytes)
	out = append(out, m.init...)
	for _, f := range m.frags {
		out = append(out, f.data...)
	}
	// The file starts at zero, like a recorded file, whatever the stream's time is.
	rebase(out[len(m.init):], m.kept)
	return out
}
