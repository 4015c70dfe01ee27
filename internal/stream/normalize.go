package stream

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Normalisation happens once, at ingest, in Publisher.Write, so that every reader gets units
// with monotonic timestamps and video that starts at a key frame. It is the one key-frame gate:
// the protocols pass every unit on, marked key only when a decoder can start on it (its
// parameter sets known, nal.Fixer), and the gate drops the video that comes before. This is the one timestamp
// policy of every input (MPEG-TS over SRT, UDP and HTTP, RTMP, RTSP, the pulls, the test
// video): a jump of a source's clock is re-anchored within the session, never a new session;
// a new session is a new publisher (the source went and came back).
//
// Per track, within one publisher session:
//   - a unit for a track that does not exist is dropped;
//   - video before the session's first key frame is dropped;
//   - PTS is never below DTS;
//   - DTS strictly increases: a step back within jitter (under half a unit duration, or 20 ms
//     while the duration is unknown) is clamped to the previous DTS plus one tick; a larger step
//     back, or a forward jump that the wall clock does not explain (over the forward limit beyond
//     the arrival gap), is a timestamp reset and the track's timeline is re-anchored to continue
//     from the previous unit plus one unit duration (or the arrival gap, when longer).
//
// Hardware encoders (the *_HARDWARE inputs) get tighter limits, so their clock jumps are
// smoothed instead of passed on.

// Forward jumps tolerated beyond the arrival gap, for normal and hardware ingest; and the
// jitter clamped while a track's unit duration is unknown.
const (
	softForwardJump = 10 * time.Second
	hardForwardJump = 500 * time.Millisecond
	defaultJitter   = 20 * time.Millisecond
)

// normalizer keeps the per-track state of one publisher session.
type normalizer struct {
	hardware bool
	tracks   []trackState
}

type trackState struct {
	clock   int64 // ticks per second
	video   bool
	started bool  // a unit was written
	keyed   bool  // video: the first key frame was seen
	offset  int64 // added to PTS and DTS after a re-anchor
	last    int64 // last written DTS
	dur     int64 // last plausible unit duration, in ticks
	arrival time.Time
	repairs int64
}

func (n *normalizer) setTracks(tracks []media.Track) {
	n.tracks = n.tracks[:0]
	for _, t := range tracks {
		clock := int64(t.ClockRate)
		if clock <= 0 {
			clock = 90000
		}
		n.tracks = append(n.tracks, trackState{clock: clock, video: t.Codec.IsVideo()})
	}
}

func ticks(d time.Duration, clock int64) int64 { return int64(d) * clock / int64(time.Second) }

// fix normalises au in place and tells whether it is to be written.
func (n *normalizer) fix(au *media.AccessUnit) bool {
	if au.Track < 0 || au.Track >= len(n.tracks) {
		return false
	}
	st := &n.tracks[au.Track]
	if st.video && !st.keyed {
		if !au.Key {
			return false
		}
		st.keyed = true
	}
	if au.PTS < au.DTS {
		au.PTS = au.DTS
	}
	au.PTS += st.offset
	au.DTS += st.offset
	if !st.started {
		st.started, st.last, st.arrival = true, au.DTS, au.Arrival
		return true
	}
	fwd := softForwardJump
	if n.hardware {
		fwd = hardForwardJump
	}
	jitter := st.dur / 2
	if jitter == 0 {
		jitter = ticks(defaultJitter, st.clock)
	}
	d := au.DTS - st.last
	var gap int64
	if !au.Arrival.IsZero() && !st.arrival.IsZero() {
		gap = max(ticks(au.Arrival.Sub(st.arrival), st.clock), 0)
	}
	switch {
	case d <= 0 && -d < jitter:
		// A small step back: clamp.
		shift := st.last + 1 - au.DTS
		au.DTS += shift
		au.PTS = max(au.PTS, au.DTS)
		st.repairs++
	case d <= 0 || d-gap > ticks(fwd, st.clock):
		// A reset or a jump: continue the timeline from the previous unit.
		step := max(st.dur, 1, min(gap, ticks(fwd, st.clock)))
		shift := st.last + step - au.DTS
		st.offset += shift
		au.DTS += shift
		au.PTS += shift
		st.repairs++
	default:
		if d < st.clock {
			st.dur = d
		}
	}
	st.last, st.arrival = au.DTS, au.Arrival
	return true
}

// awaitKey has the units of track wait for its next key frame, when it is video: a unit of
// it was lost, and the units that follow may refer to it.
func (n *normalizer) awaitKey(track int) {
	if track >= 0 && track < len(n.tracks) && n.tracks[track].video {
		n.tracks[track].keyed = false
	}
}

// repairs counts the units whose timestamps were changed.
func (n *normalizer) repairs() int64 {
	var c int64
	for i := range n.tracks {
		c += n.tracks[i].repairs
	}
	return c
}
