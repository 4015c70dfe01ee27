package ingest

import "github.com/sluicemedia/sluice/internal/media"

// Timeline limits, at 90 kHz: a step back of a track's DTS by at most maxBack is repaired in
// place; a larger step back, or a step forward of more than maxForward, is a new timeline
// (the source restarted) and so a new session.
const (
	maxBack    = 90000      // 1 s
	maxForward = 10 * 90000 // 10 s
)

// Verdict is what a Timeline says of one unit.
type Verdict uint8

// Verdicts of Timeline.Check.
const (
	Keep    Verdict = iota // publish it (its timestamps may have been repaired)
	Drop                   // a straggler of the previous timeline
	Restart                // the first unit of a new timeline: start a new session, then publish
)

// Timeline keeps DTS present and monotonic per track: small non-monotonic steps are repaired
// (DTS moved to one tick after the previous one, PTS to at least DTS), large jumps of a track
// start a new timeline. Jumps are judged per track, so a constant offset between the tracks
// is no jump. After a new timeline starts, the first unit of each other track is dropped
// while it is nearer the old timeline than the new one. The zero value is ready for use.
type Timeline struct {
	last   []int64 // per track, the last DTS published, in the track's clock
	last90 []int64 // the same at 90 kHz
	has    []bool
	ref    int64 // newest DTS of any track since the last break, at 90 kHz
	hasRef bool
	old    int64 // ref before the last break
	hasOld bool
}

// Check looks at au, of a track with the given clock rate, repairing its timestamps in place
// when they step back a little. au must not be shared yet.
func (tl *Timeline) Check(au *media.AccessUnit, clock int) Verdict {
	t := au.Track
	if t < 0 {
		return Drop
	}
	for len(tl.last) <= t {
		tl.last, tl.last90, tl.has = append(tl.last, 0), append(tl.last90, 0), append(tl.has, false)
	}
	d90 := media.Rescale(au.DTS, clock, 90000)
	v := Keep
	switch {
	case tl.has[t]:
		if step := d90 - tl.last90[t]; step < -maxBack || step > maxForward {
			tl.old, tl.hasOld = tl.ref, tl.hasRef
			clear(tl.has)
			tl.hasRef = false
			v = Restart
		}
	case tl.hasOld && tl.hasRef && abs(d90-tl.old) < abs(d90-tl.ref):
		return Drop
	}
	if tl.has[t] && au.DTS <= tl.last[t] {
		au.DTS = tl.last[t] + 1
		d90 = media.Rescale(au.DTS, clock, 90000)
	}
	au.PTS = max(au.PTS, au.DTS)
	tl.last[t], tl.last90[t], tl.has[t] = au.DTS, d90, true
	if !tl.hasRef || d90 > tl.ref {
		tl.ref, tl.hasRef = d90, true
	}
	return v
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
