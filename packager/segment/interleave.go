package segment

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// The segmenter takes units in time order across tracks, not in the order they arrived: a
// muxer (ffmpeg's MPEG-TS one, an encoder's RTMP) sends audio some hundreds of milliseconds
// before or after the video of the same time, and a segment cut at a video key frame must
// hold the audio of its own time: from the first audio frame that starts at or after its
// key frame to the last one that starts before the next (CMAF alignment, issue 19). Units
// wait in an interleaver until every track has a unit as late, within bounds.
const (
	// maxInterleave is the most media time the interleaver holds for a track that lags or has
	// stopped sending (2 s): past it, units go on without that track's. A muxer's spread
	// between its tracks is under a second (ffmpeg's MPEG-TS muxer: 0.7 s).
	maxInterleave = 2 * time.Second
	// maxInterleaveUnits and maxInterleaveBytes bound what the interleaver holds whatever the
	// timestamps say (4096 units, 32 MiB: 2 s of a 100 Mbit/s stream and more).
	maxInterleaveUnits = 4096
	maxInterleaveBytes = 32 << 20
	// interleaveJump: a unit this far from its track's previous one (a clock jump) first lets
	// every waiting unit go, so that the jump is seen where it happened.
	interleaveJump = 10 * time.Second
)

// interleaver orders units across tracks by their time: DTS, plus for video the composition
// delay of the track's last key frame, so that a key frame sorts at its presentation time,
// where its segment starts.
type interleaver struct {
	tracks []itrack // by media ID
	units  int
	bytes  int
	// ahead is the track whose units other than key frames need not wait for the other
	// tracks (-1: none): a low-latency segmenter's video, so that a partial segment is cut
	// when its video is there, not when the audio of its time comes (ffmpeg's MPEG-TS muxer
	// sends audio in packets of about 180 ms: a part would wait up to that long for it).
	// Key frames still wait, as a segment may start at one and must hold the audio of its
	// own time; a part's audio that comes late goes into the next part.
	ahead int
}

// itrack is one track's queue.
type itrack struct {
	clock  int
	video  bool
	pushed bool // a unit came since the last reset
	delay  int64
	last   time.Duration // order time of the last unit pushed
	q      []*media.AccessUnit
	head   int
	times  []time.Duration // order times of q
}

// reset forgets the tracks: tracks are the carried ones (by media ID), and ahead the media ID
// of the track whose units other than key frames go ahead (-1: none).
func (il *interleaver) reset(tracks []media.Track, ahead int) {
	il.ahead = ahead
	for i := range il.tracks {
		clear(il.tracks[i].q)
		il.tracks[i] = itrack{q: il.tracks[i].q[:0], times: il.tracks[i].times[:0]}
	}
	il.units, il.bytes = 0, 0
	for _, t := range tracks {
		for len(il.tracks) <= t.ID {
			il.tracks = append(il.tracks, itrack{})
		}
		tr := &il.tracks[t.ID]
		tr.clock, tr.video = t.ClockRate, t.Codec.IsVideo()
	}
}

// carries tells whether au is of a carried track.
func (il *interleaver) carries(au *media.AccessUnit) bool {
	return au.Track >= 0 && au.Track < len(il.tracks) && il.tracks[au.Track].clock > 0
}

// jumps tells whether au's time is a jump from its track's previous unit.
func (il *interleaver) jumps(au *media.AccessUnit) bool {
	tr := &il.tracks[au.Track]
	d := il.time(tr, au) - tr.last
	return tr.pushed && (d > interleaveJump || d < -interleaveJump)
}

// time returns au's order time.
func (il *interleaver) time(tr *itrack, au *media.AccessUnit) time.Duration {
	if tr.video && au.Key {
		tr.delay = max(au.PTS-au.DTS, 0)
	}
	return ticksToDuration(au.DTS+tr.delay, tr.clock)
}

// push queues au, of a carried track.
func (il *interleaver) push(au *media.AccessUnit) {
	tr := &il.tracks[au.Track]
	t := il.time(tr, au)
	tr.pushed, tr.last = true, t
	tr.q, tr.times = append(tr.q, au), append(tr.times, t)
	il.units++
	il.bytes += au.Size()
}

// pop returns the earliest queued unit if it may go: every carried track has a unit queued
// (a track that has not sent yet is waited for too: at the start of a session one track's
// units may come before the other's), the queue spans more than maxInterleave or holds too
// much, or all is true. It returns nil otherwise.
func (il *interleaver) pop(all bool) *media.AccessUnit {
	if il.units == 0 {
		return nil
	}
	first, waiting := -1, false
	var oldest, newest time.Duration
	for i := range il.tracks {
		tr := &il.tracks[i]
		if tr.head == len(tr.q) {
			waiting = waiting || tr.clock > 0
			continue
		}
		if t := tr.times[tr.head]; first < 0 || t < oldest {
			first, oldest = i, t
		}
		newest = max(newest, tr.times[len(tr.q)-1])
	}
	if waiting && !all && newest-oldest <= maxInterleave && il.units <= maxInterleaveUnits && il.bytes <= maxInterleaveBytes &&
		(first != il.ahead || il.tracks[first].q[il.tracks[first].head].Key) {
		return nil
	}
	tr := &il.tracks[first]
	au := tr.q[tr.head]
	tr.q[tr.head] = nil
	tr.head++
	il.units--
	il.bytes -= au.Size()
	switch {
	case tr.head == len(tr.q):
		tr.q, tr.times, tr.head = tr.q[:0], tr.times[:0], 0
	case tr.head >= 64 && 2*tr.head >= len(tr.q):
		n := copy(tr.q, tr.q[tr.head:])
		copy(tr.times, tr.times[tr.head:])
		clear(tr.q[n:])
		tr.q, tr.times, tr.head = tr.q[:n], tr.times[:n], 0
	}
	return au
}
