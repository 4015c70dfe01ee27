package segment

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// Cutting rules.
const (
	// cutTolerance lets a key frame a little before the target end the segment, so that
	// timestamp jitter does not push the cut a whole GOP later. Audio-only streams, whose
	// units are dense, cut at the target itself.
	cutTolerance = 50 * time.Millisecond
	// minShiftStart: a timeline whose first DTS is below it is shifted by it, so that
	// timestamps stay positive in the file whatever the other tracks start at.
	minShiftStart = 10 * time.Second
	// reanchorDrift: the program date time follows the media timeline from its anchor until
	// it drifts this far from the arrival times.
	reanchorDrift = 2 * time.Second
)

// SegmenterOptions configure a Segmenter.
type SegmenterOptions struct {
	// Target is the fragment size: a segment ends at the first video key frame at or after
	// it (audio only: the first unit). Default 3 s, at least 100 ms.
	Target time.Duration
	// MaxDuration cuts a segment without a key frame when the source sends none for this
	// long, which bounds memory. Default the larger of 30 s and 4 × Target.
	MaxDuration time.Duration
	// MaxBytes cuts a segment without a key frame past this many bytes (counted in
	// SegmenterStats.ByteCuts). Default 64 MiB.
	MaxBytes int
	// ByteRate bounds a segment's bytes by its duration: a unit that would take the open
	// segment past ByteRate × (its duration so far + 1 s) is dropped, and so are the units of
	// its video track until the next key frame (counted in SegmenterStats.OverRate). In bytes
	// per second of media. Default DefaultByteRate (100 Mbit/s).
	ByteRate int64
	// PartTarget, when set, makes low-latency segments: each is cut into partial segments
	// (moof/mdat chunks, Segment.Partials) of at most about this much of the main track,
	// written one after the other into the segment's one buffer, and the Store publishes the
	// segment in progress at every partial segment (Window.Open). A partial segment ends
	// before the unit that would take it past PartTarget (given the last frame interval), so
	// it is no longer than PartTarget while frames come more often than that. Default 0: one
	// moof/mdat per segment, as before (classic players). At least 50 ms when set.
	PartTarget time.Duration
	// Now is the clock for units without an arrival time. Default time.Now.
	Now func() time.Time
	// Log receives warnings. Default slog.Default().
	Log *slog.Logger
}

func (o SegmenterOptions) withDefaults() SegmenterOptions {
	opt.Positive(&o.Target, 3*time.Second)
	o.Target = max(o.Target, 100*time.Millisecond)
	opt.Positive(&o.MaxDuration, max(30*time.Second, 4*o.Target))
	opt.Positive(&o.MaxBytes, DefaultSegmentBytes)
	opt.Positive(&o.ByteRate, DefaultByteRate)
	opt.Clock(&o.Now)
	opt.Zero(&o.Log, slog.Default())
	if o.PartTarget > 0 {
		o.PartTarget = max(o.PartTarget, 50*time.Millisecond)
	}
	return o
}

// Segmenter cuts access units into segments and adds them to a Store. It has no goroutine
// and is not safe for concurrent use: one loop feeds it (see Run).
type Segmenter struct {
	st   *Store
	opts SegmenterOptions

	tracks  []media.Track // as last given to SetTracks
	order   interleaver   // units wait here to be taken in time order
	init    *Init
	frag    *fmp4.Fragmenter
	main    int // media ID of the track whose timeline cuts segments
	clock   int // its clock rate
	video   bool
	version int

	seq         int64
	discSeq     int64
	produced    bool // a segment was stored
	pendingDisc bool // the next segment follows a gap

	open     bool // a segment has begun
	startDTS int64
	lastMain int64 // DTS of the main track's last unit
	key      bool
	arrival  time.Time

	// trim drops units of other tracks older than the main track's first unit while the
	// first segment of a timeline is open: audio that arrives after the first key frame
	// but belongs before it would make the timeline start early, and a player that aligns
	// a discontinuity on the earliest track would leave a hole in the video.
	trim     bool
	trimFrom time.Duration

	newPeriod   bool      // the next unit starts a timeline: choose its shift
	timeline    *Timeline // of the segments being made; nil until a timeline's first segment
	anchored    bool
	anchorWall  time.Time
	anchorMedia time.Duration
	lastEnd     time.Time // program date time at which the last segment ended

	// Low-latency segments (PartTarget): the open segment's bytes so far, its partial
	// segments, where the open partial segment started and whether at a key frame, and the
	// moof sequence number of the next partial segment.
	buf       []byte
	partials  []Partial
	partStart int64
	partKey   bool
	partEarly bool // the open partial segment was cut after its last frame; the next main unit starts the next
	moofSeq   uint32
	lastStep  int64         // the main track's last DTS step, in its clock
	part      time.Duration // the longest partial segment, once the frame rate is known (partTarget)
	expected  time.Duration // the open segment's expected duration: the previous one's, or Target

	dropped  int64
	overRate int64
	byteCuts int64
	await    []bool // by media ID: a video track waiting for a key frame after a drop
	rateLog  budget.LogLimit
	cutLog   budget.LogLimit
}

// NewSegmenter returns a Segmenter that adds its segments to st. Feed it SetTracks, then
// WriteUnit for each unit.
func NewSegmenter(st *Store, opts SegmenterOptions) *Segmenter {
	return &Segmenter{st: st, opts: opts.withDefaults(), main: -1}
}

// Target returns the fragment size.
func (sg *Segmenter) Target() time.Duration { return sg.opts.Target }

// Dropped counts units dropped: before the first key frame of a timeline, of tracks the
// segments do not carry, with timestamps out of range, or over the byte rate.
func (sg *Segmenter) Dropped() int64 { return sg.dropped }

// SegmenterStats counts what a Segmenter dropped or cut for its budgets.
type SegmenterStats struct {
	// Dropped counts every unit dropped (see Segmenter.Dropped).
	Dropped int64
	// OverRate counts the units dropped for SegmenterOptions.ByteRate, and the video units
	// dropped after them until a key frame.
	OverRate int64
	// ByteCuts counts segments cut early, without a key frame, at SegmenterOptions.MaxBytes.
	ByteCuts int64
}

// Stats returns the segmenter's counters. For the goroutine that feeds it.
func (sg *Segmenter) Stats() SegmenterStats {
	return SegmenterStats{Dropped: sg.dropped, OverRate: sg.overRate, ByteCuts: sg.byteCuts}
}

// SetTracks sets the tracks of the units that follow. Tracks equal to the current ones
// change nothing; different ones end the open segment, make a new init segment and mark a
// discontinuity. Tracks of a codec fMP4 cannot carry are left out. It fails when no track
// can be carried; units are then dropped until tracks are set again.
func (sg *Segmenter) SetTracks(tracks []media.Track) error {
	if sg.tracks != nil && media.SameTracks(sg.tracks, tracks) {
		return nil
	}
	err := sg.drain()
	if err := sg.closeSegment(nil); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	sg.tracks, sg.init, sg.frag, sg.main = append([]media.Track{}, tracks...), nil, nil, -1
	sg.order.reset(nil, -1)
	sg.markGap()
	in, err := sg.newInit(tracks)
	if err != nil {
		return err
	}
	frag, err := fmp4.NewFragmenter(in.Tracks)
	if err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	sg.init, sg.frag = in, frag
	sg.await = sg.await[:0]
	sg.main, sg.clock, sg.video = in.Tracks[0].ID, in.Tracks[0].ClockRate, false
	for _, t := range in.Tracks {
		if t.Codec.IsVideo() {
			sg.main, sg.clock, sg.video = t.ID, t.ClockRate, true
			break
		}
	}
	ahead := -1
	if sg.opts.PartTarget > 0 && sg.video {
		ahead = sg.main
	}
	sg.order.reset(in.Tracks, ahead)
	return nil
}

// newInit builds the next init version from the tracks that can be carried.
func (sg *Segmenter) newInit(tracks []media.Track) (*Init, error) {
	in := &Init{Version: sg.version + 1, Created: sg.opts.Now()}
	var skipped []error
	for _, t := range tracks {
		one, err := fmp4.InitSegment([]media.Track{t})
		if err == nil {
			var codec string
			if codec, err = fmp4.CodecString(t); err == nil {
				in.Tracks = append(in.Tracks, t)
				in.TrackData = append(in.TrackData, one)
				in.Codecs = append(in.Codecs, codec)
				continue
			}
		}
		skipped = append(skipped, err)
	}
	if len(in.Tracks) == 0 {
		return nil, fmt.Errorf("segment: %w: %w", ErrNoTracks, errors.Join(skipped...))
	}
	if len(skipped) > 0 {
		sg.opts.Log.Warn("tracks left out of the segments", "error", errors.Join(skipped...))
	}
	data, err := fmp4.InitSegment(in.Tracks)
	if err != nil {
		return nil, fmt.Errorf("segment: %w", err)
	}
	in.Data = data
	sg.version++
	return in, nil
}

// Discontinuity marks an input gap: the units waiting to be taken in time order are
// written, the open segment ends, the next segment is flagged and starts a new timeline at a
// key frame. Repeated calls without units between them count once.
func (sg *Segmenter) Discontinuity() error {
	err := sg.drain()
	if err2 := sg.discontinuity(); err == nil {
		err = err2
	}
	return err
}

// discontinuity ends the open segment and marks the gap.
func (sg *Segmenter) discontinuity() error {
	err := sg.closeSegment(nil)
	sg.markGap()
	return err
}

// markGap flags the next segment (when one was stored before) and restarts the timeline.
func (sg *Segmenter) markGap() {
	if sg.produced {
		sg.pendingDisc = true
	}
	sg.newPeriod, sg.anchored, sg.timeline = true, false, nil
}

// Flush writes the units still waiting and ends the open segment, at the end of the stream.
func (sg *Segmenter) Flush() error {
	err := sg.drain()
	if err2 := sg.closeSegment(nil); err == nil {
		err = err2
	}
	return err
}

// WriteUnit adds au. Units are taken in time order across tracks (see interleaver): au may
// wait for the other tracks' units of its time, and those that may go are written, each
// first ending the open segment when it is the key frame (audio only: the unit) that reaches
// the target duration. A unit with Discontinuity set calls Discontinuity first. Units that
// cannot be carried are dropped and counted; the error is for a failure to write a segment,
// or ErrNoTracks.
func (sg *Segmenter) WriteUnit(au *media.AccessUnit) error {
	if au.Discontinuity {
		if err := sg.Discontinuity(); err != nil {
			return err
		}
	}
	if sg.frag == nil {
		sg.dropped++
		return ErrNoTracks
	}
	if !sg.order.carries(au) {
		return sg.write(au) // dropped and counted there
	}
	if sg.order.jumps(au) {
		if err := sg.drain(); err != nil {
			return err
		}
	}
	sg.order.push(au)
	for next := sg.order.pop(false); next != nil; next = sg.order.pop(false) {
		if err := sg.write(next); err != nil {
			return err
		}
	}
	return nil
}

// drain writes every unit waiting in the interleaver, in time order; it returns the first
// error and writes the rest.
func (sg *Segmenter) drain() error {
	var first error
	for next := sg.order.pop(true); next != nil; next = sg.order.pop(true) {
		if err := sg.write(next); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// write adds one unit in time order: the cutting rules, the budgets and the fragmenter.
func (sg *Segmenter) write(au *media.AccessUnit) error {
	main := au.Track == sg.main
	if main && sg.open {
		// The ingest keeps DTS monotonic within a session; a jump anyway (a source that
		// restarted its clock) starts a new timeline rather than a sample lasting the jump.
		if d := ticksToDuration(au.DTS-sg.lastMain, sg.clock); d < -time.Second || d > sg.opts.MaxDuration {
			sg.opts.Log.Warn("segment: timestamp jump, new timeline", "jump", d)
			if err := sg.discontinuity(); err != nil {
				return err
			}
		}
	}
	if sg.awaitsKey(au) {
		sg.dropped++
		sg.overRate++
		return nil
	}
	switch {
	case !sg.open:
		if !main || sg.video && !au.Key {
			sg.dropped++ // wait for a key frame of the main track
			return nil
		}
		sg.begin(au)
	case main:
		elapsed := ticksToDuration(au.DTS-sg.startDTS, sg.clock)
		reached := sg.video && au.Key && elapsed >= sg.opts.Target-cutTolerance || !sg.video && elapsed >= sg.opts.Target
		full := sg.frag.Size() >= sg.opts.MaxBytes
		if reached || full || elapsed >= sg.opts.MaxDuration {
			if full && !reached {
				sg.byteCuts++
				sg.logBudget(&sg.cutLog, "segment: cut early at its byte cap", "segment_bytes", int64(sg.opts.MaxBytes))
			}
			if err := sg.closeSegment(au); err != nil {
				return err
			}
			sg.begin(au)
		} else if sg.partEarly {
			sg.partStart, sg.partKey, sg.partEarly = au.DTS, au.Key || !sg.video, false
		} else if sg.partDue(au) {
			if err := sg.cutPartial(au); err != nil {
				return err
			}
		}
	}
	if sg.trim && !main && sg.before(au) {
		sg.dropped++ // see trim
		return nil
	}
	if sg.overBudget(au, main) {
		sg.dropped++
		sg.overRate++
		sg.logBudget(&sg.rateLog, "segment: over its byte rate, units dropped until the next key frame", "byte_rate", sg.opts.ByteRate)
		return nil
	}
	if err := sg.frag.Add(au); err != nil {
		if errors.Is(err, fmp4.ErrUnknownTrack) || errors.Is(err, fmp4.ErrTimestamp) {
			sg.dropped++
			return nil
		}
		return fmt.Errorf("segment: %w", err)
	}
	if main {
		if d := au.DTS - sg.lastMain; d > 0 && ticksToDuration(d, sg.clock) <= time.Second {
			sg.lastStep = d
		}
		sg.lastMain = au.DTS
		if sg.partEndsWith(au) {
			if err := sg.cutPartialAfter(); err != nil {
				return err
			}
		}
	}
	if au.Key && au.Track < len(sg.await) {
		sg.await[au.Track] = false
	}
	return nil
}

// rateBurst is the media time a segment may carry beyond its duration at ByteRate: its first
// key frame and the encoder's bursts (at 100 Mbit/s, 12.5 MB).
const rateBurst = time.Second

// overBudget tells whether au would take the open segment past the byte rate; it then has
// the video track of au wait for a key frame. A segment always takes its first unit.
func (sg *Segmenter) overBudget(au *media.AccessUnit, main bool) bool {
	if sg.frag.Samples() == 0 {
		return false
	}
	last := sg.lastMain
	if main {
		last = au.DTS
	}
	elapsed := max(ticksToDuration(last-sg.startDTS, sg.clock), 0) + rateBurst
	allowed := int64(float64(sg.opts.ByteRate) * elapsed.Seconds())
	if int64(sg.frag.Size()+au.Size()) <= allowed {
		return false
	}
	if i := sg.init.Index(au.Track); i >= 0 && sg.init.Tracks[i].Codec.IsVideo() {
		for len(sg.await) <= au.Track {
			sg.await = append(sg.await, false)
		}
		sg.await[au.Track] = true
	}
	return true
}

// awaitsKey tells whether au is a video unit after a drop, before its track's key frame.
func (sg *Segmenter) awaitsKey(au *media.AccessUnit) bool {
	return !au.Key && au.Track >= 0 && au.Track < len(sg.await) && sg.await[au.Track]
}

// logBudget logs, at most once a second of its kind, that a budget was hit.
func (sg *Segmenter) logBudget(l *budget.LogLimit, msg, name string, limit int64) {
	if n, ok := l.Note(sg.opts.Now(), 1); ok {
		sg.opts.Log.Warn(msg, "budget", name, "limit", limit, "events", n,
			"dropped", sg.overRate, "byte_cuts", sg.byteCuts)
	}
}

// before tells whether au is older than the first unit of the timeline's main track.
func (sg *Segmenter) before(au *media.AccessUnit) bool {
	i := sg.init.Index(au.Track)
	return i >= 0 && ticksToDuration(au.DTS, sg.init.Tracks[i].ClockRate) < sg.trimFrom
}

// begin opens a segment at au, choosing the timeline's shift when it starts a timeline.
func (sg *Segmenter) begin(au *media.AccessUnit) {
	if sg.newPeriod {
		var shift time.Duration
		if ticksToDuration(au.DTS, sg.clock) < minShiftStart {
			shift = minShiftStart
		}
		sg.frag.SetShift(shift)
		sg.newPeriod = false
		// The timeline's audio starts where its first key frame is presented, as every
		// segment's does (see interleaver).
		sg.trim, sg.trimFrom = true, ticksToDuration(au.DTS+max(au.PTS-au.DTS, 0), sg.clock)
	} else {
		sg.trim = false
	}
	sg.open, sg.startDTS, sg.key = true, au.DTS, au.Key || !sg.video
	sg.partStart, sg.partKey, sg.partEarly = au.DTS, sg.key, false
	if sg.expected <= 0 {
		sg.expected = sg.opts.Target
	}
	sg.arrival = au.Arrival
	if sg.arrival.IsZero() {
		sg.arrival = sg.opts.Now()
	}
}

// closeSegment writes the open segment, if any, and stores it; next is the unit that will
// start the following segment, or nil.
func (sg *Segmenter) closeSegment(next *media.AccessUnit) error {
	if !sg.open {
		return nil
	}
	sg.open = false
	var seg *Segment
	if sg.opts.PartTarget > 0 {
		err := sg.flushPartial(next)
		parts, data := sg.partials, sg.buf
		if err != nil {
			sg.partials, sg.buf = nil, nil
			sg.st.publish(nil)
			return err
		}
		sg.partials, sg.buf = nil, make([]byte, 0, len(data)+len(data)/4)
		if len(parts) == 0 {
			return nil
		}
		seg = sg.partialSegment(data, parts)
		sg.expected = seg.Duration
	} else {
		frag, err := sg.frag.Flush(uint32(sg.seq+1), next)
		if err != nil {
			return fmt.Errorf("segment %d: %w", sg.seq, err)
		}
		if frag == nil {
			return nil
		}
		seg = &Segment{
			Seq: sg.seq, Init: sg.init, Data: frag.Data, Tracks: frag.Tracks, Key: sg.key,
			Discontinuity: sg.pendingDisc,
		}
		sg.setTimes(seg)
	}
	if seg.Discontinuity {
		sg.discSeq++
	}
	seg.DiscSeq = sg.discSeq
	seg.ProgramDateTime = sg.dateTime(seg)
	if sg.timeline == nil {
		origin := seg.Start
		for _, p := range seg.Tracks {
			clock := sg.init.Tracks[sg.init.Index(p.Track)].ClockRate
			origin = min(origin, ticksToDuration(p.BaseTime, clock))
		}
		sg.timeline = &Timeline{Seq: sg.discSeq, Origin: origin, DateTime: seg.ProgramDateTime.Add(origin - seg.Start)}
	}
	seg.Timeline = sg.timeline
	sg.seq++
	sg.produced, sg.pendingDisc = true, false
	sg.st.add(seg)
	return nil
}

// setTimes sets the segment's Start and Duration from its main track (else its first).
func (sg *Segmenter) setTimes(seg *Segment) {
	if p, ok := seg.Part(sg.main); ok {
		seg.Start = ticksToDuration(p.BaseTime, sg.clock)
		seg.Duration = ticksToDuration(p.Duration, sg.clock)
	} else {
		p := &seg.Tracks[0]
		clock := sg.init.Tracks[sg.init.Index(p.Track)].ClockRate
		seg.Start, seg.Duration = ticksToDuration(p.BaseTime, clock), ticksToDuration(p.Duration, clock)
	}
}

// dateTime maps the segment's start to the wall clock: along the media timeline from an
// anchor (the arrival of a timeline's first unit), re-anchored to the arrival time when the
// two drift apart, and never before the end of the previous segment.
func (sg *Segmenter) dateTime(seg *Segment) time.Time {
	pdt := sg.previewDateTime(seg)
	sg.anchored, sg.anchorWall, sg.anchorMedia = true, pdt, seg.Start
	sg.lastEnd = pdt.Add(seg.Duration)
	return pdt
}

// previewDateTime is dateTime without moving the anchor, for a segment in progress.
func (sg *Segmenter) previewDateTime(seg *Segment) time.Time {
	pdt := sg.anchorWall.Add(seg.Start - sg.anchorMedia)
	if d := pdt.Sub(sg.arrival); !sg.anchored || d > reanchorDrift || d < -reanchorDrift {
		pdt = sg.arrival
	}
	if pdt.Before(sg.lastEnd) {
		pdt = sg.lastEnd
	}
	return pdt
}

// partDue tells whether the open partial segment ends before au, a unit of the main track
// that does not end the segment. Two rules: a part never runs past PartTarget (it ends
// before the unit that, with one more frame interval, would take it there); and the parts
// left until the segment's expected end (its start plus the previous segment's duration, or
// Target) are balanced, so that the segment does not end with a sliver of a part (players
// look parts up with a tolerance of a few hundred milliseconds and skip one of 40 ms).
func (sg *Segmenter) partDue(au *media.AccessUnit) bool {
	return sg.partDueAt(au.DTS, max(au.DTS-sg.lastMain, sg.lastStep, 0))
}

// partEndsWith tells whether the open partial segment ends with au, the main-track unit just
// added: the next one, a frame interval later, would be due (partDue), so the part is cut now
// rather than when that unit comes, a frame interval (33 ms at 30 fps) sooner for a player
// waiting on it. Not where the next unit may be the key frame that ends the segment: the
// segment's last part waits for it, so that the audio of its time goes in with it (see
// interleaver) rather than into a part of audio alone.
func (sg *Segmenter) partEndsWith(au *media.AccessUnit) bool {
	if sg.opts.PartTarget <= 0 || !sg.open || sg.partEarly || sg.lastStep <= 0 {
		return false
	}
	next := au.DTS + sg.lastStep
	if !sg.video || ticksToDuration(next-sg.startDTS, sg.clock) >= sg.opts.Target-cutTolerance {
		return false
	}
	return sg.partDueAt(next, sg.lastStep)
}

// partDueAt is partDue for a main-track unit at dts, a frame interval step after the last.
func (sg *Segmenter) partDueAt(dts, step int64) bool {
	if sg.opts.PartTarget <= 0 || sg.frag.Samples() == 0 {
		return false
	}
	target := sg.partTarget(step)
	elapsed := ticksToDuration(dts-sg.partStart, sg.clock)
	if ticksToDuration(dts-sg.partStart+step, sg.clock) > target {
		return true
	}
	left := sg.expected - ticksToDuration(sg.partStart-sg.startDTS, sg.clock)
	if left <= target {
		return false // the rest is the segment's last part
	}
	parts := (left + target - 1) / target
	return elapsed >= left/parts
}

// partTarget is the longest a partial segment may last: PartTarget cut down to a whole number
// of frames of step (the main track's frame interval, in its clock), fixed at the first part
// and published as Window.PartTarget, so that PART-TARGET, and PART-HOLD-BACK with it, say
// what the parts really are (30 fps in 333 ms: 9 frames, 300 ms; the hold-back is then 0.9 s,
// not 1 s). It stays PartTarget when whole frames would lose more than 15 % of it (frames of
// 200 ms at the start of a stream, or fewer than 3 a part).
func (sg *Segmenter) partTarget(step int64) time.Duration {
	if sg.part > 0 {
		return sg.part
	}
	if step <= 0 {
		return sg.opts.PartTarget
	}
	frames := int64(sg.opts.PartTarget / ticksToDuration(step, sg.clock))
	sg.part = sg.opts.PartTarget
	if d := ticksToDuration(frames*step, sg.clock); frames >= 3 && d > 0 && d <= sg.opts.PartTarget && d*100 >= sg.opts.PartTarget*85 {
		sg.part = d
	}
	sg.st.setPartTarget(sg.part)
	return sg.part
}

// cutPartial ends the open partial segment before next, a unit of the main track, and
// publishes the segment in progress.
func (sg *Segmenter) cutPartial(next *media.AccessUnit) error {
	if err := sg.flushPartial(next); err != nil {
		return err
	}
	sg.partStart, sg.partKey = next.DTS, next.Key || !sg.video
	return sg.publishOpen()
}

// cutPartialAfter ends the open partial segment after the main-track unit just added (its
// last sample lasts as long as the one before), and publishes the segment in progress; the
// next main-track unit starts the next part.
func (sg *Segmenter) cutPartialAfter() error {
	if err := sg.flushPartial(nil); err != nil {
		return err
	}
	sg.partEarly = true
	return sg.publishOpen()
}

// publishOpen publishes the segment in progress with its partial segments so far.
func (sg *Segmenter) publishOpen() error {
	if len(sg.partials) == 0 {
		return nil
	}
	open := sg.partialSegment(sg.buf, append([]Partial(nil), sg.partials...))
	if open.Discontinuity {
		open.DiscSeq = sg.discSeq + 1
	} else {
		open.DiscSeq = sg.discSeq
	}
	open.ProgramDateTime = sg.previewDateTime(open)
	sg.st.publish(open)
	return nil
}

// flushPartial writes the open partial segment after the segment's bytes so far.
func (sg *Segmenter) flushPartial(next *media.AccessUnit) error {
	sg.moofSeq++
	frag, err := sg.frag.FlushTo(sg.buf, sg.moofSeq, next, len(sg.partials) == 0)
	if err != nil {
		return fmt.Errorf("segment %d part %d: %w", sg.seq, len(sg.partials), err)
	}
	if frag == nil {
		return nil
	}
	p := Partial{Index: len(sg.partials), Start: len(sg.buf), End: len(frag.Data), Independent: sg.partKey, Tracks: frag.Tracks}
	main := &frag.Tracks[0]
	for i := range frag.Tracks {
		if frag.Tracks[i].Track == sg.main {
			main = &frag.Tracks[i]
		}
	}
	clock := sg.init.Tracks[sg.init.Index(main.Track)].ClockRate
	p.Duration = ticksToDuration(main.Duration, clock)
	sg.buf = frag.Data
	sg.partials = append(sg.partials, p)
	return nil
}

// partialSegment makes a segment of the partial segments so far, over data[:their end]
// (the segment in progress, or the whole segment once it ends).
func (sg *Segmenter) partialSegment(data []byte, parts []Partial) *Segment {
	end := parts[len(parts)-1].End
	seg := &Segment{
		Seq: sg.seq, Init: sg.init, Data: data[:end:end], Tracks: sumTracks(parts), Key: sg.key,
		Discontinuity: sg.pendingDisc, Partials: parts, Timeline: sg.timeline,
	}
	sg.setTimes(seg)
	return seg
}
