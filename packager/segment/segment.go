// Package segment cuts a live stream into CMAF segments and keeps the latest of them in
// memory for the HLS and DASH handlers (packager/hls, packager/dash), which share one Store
// when their fragment sizes are equal.
//
// A player wires it as:
//
//	st := segment.NewStore(segment.StoreOptions{Window: 60 * time.Second})
//	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 3 * time.Second, Log: log})
//	err := segment.Run(ctx, reader, log, sg) // blocking; reader is a *stream.Reader
//
// and serves hls.New(st, ...) and dash.New(st, ...) over HTTP. With different HLS and DASH
// fragment sizes it makes two stores and two segmenters and passes both to one Run.
//
// The Segmenter has no goroutine: it is fed unit by unit, cuts a segment at the first video
// key frame at or after the target duration, and hands it to the Store at once, so a segment
// is listed as soon as the key frame that ends it arrives. The Store keeps a sliding window
// of segments by duration (plus a grace of a few segments for slow clients); readers get
// immutable snapshots and never block the writer.
//
// Both are bounded by bytes too, whatever the timestamps say: a segment may carry
// SegmenterOptions.ByteRate per second of its duration (units past it are dropped), and the
// Store keeps StoreOptions.Budget bytes at most (the oldest segments go first). A source whose
// timestamps hardly advance therefore costs the player its budget, not what it sends.
package segment

import (
	"errors"
	"slices"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// ErrNoTracks is returned by WriteUnit before SetTracks gave usable tracks.
var ErrNoTracks = errors.New("segment: no tracks")

// Init is one version of the init segment: a new one is made when the tracks change.
type Init struct {
	// Version numbers init segments from 1, in the order they were made.
	Version int
	// Tracks are the tracks the segments carry (those of a codec fMP4 can carry).
	Tracks []media.Track
	// Data is the init segment with every track (HLS).
	Data []byte
	// TrackData holds a single-track init segment per track, in the order of Tracks (DASH).
	TrackData [][]byte
	// Codecs holds the RFC 6381 codecs string of each track, in the order of Tracks.
	Codecs []string
	// Created is when the init segment was made.
	Created time.Time
}

// HasVideo tells whether a track is video.
func (in *Init) HasVideo() bool {
	for _, t := range in.Tracks {
		if t.Codec.IsVideo() {
			return true
		}
	}
	return false
}

// Index returns the position in Tracks of the track with media ID id, or -1.
func (in *Init) Index(id int) int {
	for i, t := range in.Tracks {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// Segment is one media segment. It is immutable once in the Store.
type Segment struct {
	// Seq numbers segments from 0, across discontinuities.
	Seq int64
	// Init is the init segment the segment needs.
	Init *Init
	// Start is the media time of the segment's first unit of its main track (the first video
	// track, else the first track): its DTS plus the timeline's shift.
	Start time.Duration
	// Duration is the main track's duration in the segment.
	Duration time.Duration
	// Discontinuity marks the first segment after an input gap or a change of tracks.
	Discontinuity bool
	// DiscSeq counts the discontinuities up to and including this segment.
	DiscSeq int64
	// Timeline is the run of segments without a gap this one belongs to.
	Timeline *Timeline
	// ProgramDateTime is the wall-clock time of the segment's first unit: the arrival time,
	// smoothed along the media timeline (see Segmenter).
	ProgramDateTime time.Time
	// Data is the segment file: styp + moof + mdat with every track (HLS).
	Data []byte
	// Key tells whether the segment starts with a video key frame (or is audio only): it can
	// be decoded alone.
	Key bool
	// Tracks describes each track's part of Data; a part's Header followed by its bytes of Data
	// is the single-track segment DASH serves.
	Tracks []fmp4.TrackFragment
	// Partials are the segment's partial segments, in order, for a low-latency player's
	// segmenter (SegmenterOptions.PartTarget); nil otherwise. Data is their bytes one after
	// the other, and Tracks then sums theirs (without Header, Start and End: see TrackData).
	Partials []Partial
	// Created is when the segment was stored.
	Created time.Time
}

// Partial is one partial segment of a low-latency segment (an LL-HLS EXT-X-PART): a moof and
// mdat chunk of its segment's Data, the first one after the segment's styp box. Its bytes are
// those of the segment, not a copy.
type Partial struct {
	// Index numbers the partial segments of a segment from 0.
	Index int
	// Start and End locate the partial segment in its segment's Data.
	Start, End int
	// Duration is the main track's duration in the partial segment.
	Duration time.Duration
	// Independent tells whether it starts with a video key frame (or is audio only).
	Independent bool
	// Tracks describes each track's part of it; offsets count from the start of the
	// segment's Data and each Header starts with a styp box.
	Tracks []fmp4.TrackFragment
}

// PartialData returns the bytes of a partial segment of s.
func (s *Segment) PartialData(p *Partial) []byte { return s.Data[p.Start:p.End] }

// TrackData returns the single-track segment of the track with media ID id (what DASH
// serves) as pieces to concatenate (see Concat): the track's header and sample bytes, for a
// low-latency segment those of each partial segment (one styp box at the start). The sample
// bytes are those of Data, not a copy.
func (s *Segment) TrackData(id int) ([][]byte, bool) {
	if s.Partials == nil {
		p, ok := s.Part(id)
		if !ok {
			return nil, false
		}
		return [][]byte{p.Header, s.Data[p.Start:p.End]}, true
	}
	var out [][]byte
	for i := range s.Partials {
		for j := range s.Partials[i].Tracks {
			tf := &s.Partials[i].Tracks[j]
			if tf.Track != id {
				continue
			}
			hdr := tf.Header
			if len(out) > 0 {
				hdr = hdr[fmp4.StypSize():]
			}
			out = append(out, hdr, s.Data[tf.Start:tf.End])
		}
	}
	return out, len(out) > 0
}

// sumTracks adds up the partial segments' track fragments: per track (in ID order) the first
// one's BaseTime and Key, the sums of Duration and Samples; no Header, Start or End.
func sumTracks(parts []Partial) []fmp4.TrackFragment {
	var out []fmp4.TrackFragment
	for i := range parts {
		for _, tf := range parts[i].Tracks {
			k := 0
			for k < len(out) && out[k].Track != tf.Track {
				k++
			}
			if k == len(out) {
				out = append(out, fmp4.TrackFragment{Track: tf.Track, BaseTime: tf.BaseTime, Key: tf.Key})
			}
			out[k].Duration += tf.Duration
			out[k].Samples += tf.Samples
		}
	}
	slices.SortFunc(out, func(a, b fmp4.TrackFragment) int { return a.Track - b.Track })
	return out
}

// Timeline is a run of segments without a gap between them (a DASH Period): their media times
// share one origin and one mapping to the wall clock.
type Timeline struct {
	// Seq is the DiscSeq of the timeline's segments.
	Seq int64
	// Origin is the earliest media time of the timeline's first segment over all its tracks
	// (audio may start a little before the first video key frame).
	Origin time.Duration
	// DateTime is the wall-clock time of Origin, from the first segment's ProgramDateTime.
	DateTime time.Time
}

// End returns the media time at which the segment ends.
func (s *Segment) End() time.Duration { return s.Start + s.Duration }

// Part returns the segment's part of the track with media ID id.
func (s *Segment) Part(id int) (*fmp4.TrackFragment, bool) {
	for i := range s.Tracks {
		if s.Tracks[i].Track == id {
			return &s.Tracks[i], true
		}
	}
	return nil, false
}

// ticksToDuration converts ticks of a clock to a duration.
func ticksToDuration(ticks int64, clock int) time.Duration {
	return time.Duration(media.Rescale(ticks, clock, int(time.Second)))
}
