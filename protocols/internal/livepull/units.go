package livepull

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/packager/nal"
)

// TrackUnits turns the samples of one track of an fMP4 init segment into access units on the
// track's clock; video samples leave with their NAL units fixed (packager/nal: AUDs dropped,
// parameter sets before key frames), and parameter sets met in the stream are learnt into
// Track. The HLS fMP4 reader keeps one per track of EXT-X-MAP, the DASH reader one per
// representation.
type TrackUnits struct {
	// Track is the track to announce: Track.Params follow the parameter sets seen.
	Track     media.Track
	timescale int        // mdhd timescale
	video     *nal.Fixer // nil for audio
}

// NewTrackUnits returns the converter of the samples of it (Track a copy of it.Track).
func NewTrackUnits(it *fmp4.InitTrack) *TrackUnits {
	t := &TrackUnits{Track: it.Track, timescale: int(it.Timescale)}
	if p := it.Track.Params; it.Track.Codec.IsVideo() {
		t.video = nal.NewFixer(it.Track.Codec, p.VPS, p.SPS, p.PPS)
	}
	return t
}

// Ready tells whether a video track has its parameter sets (an audio track always has what
// it needs).
func (t *TrackUnits) Ready() bool { return t.video == nil || t.video.Ready() }

// Unit converts s, its times moved by shift (in the track's clock rate), into a unit of track
// s.Track. It returns nil when the sample is dropped (empty, its NAL units unreadable, nothing
// left after the fix; the next key frame recovers), and changed when the sample changed
// Track.Params: the track is to be announced again with the next units.
func (t *TrackUnits) Unit(s fmp4.Sample, shift int64) (au *media.AccessUnit, changed bool) {
	rate, dts := t.Track.ClockRate, int64(s.DTS)
	au = &media.AccessUnit{Track: s.Track, Key: true,
		DTS: media.Rescale(dts, t.timescale, rate) + shift,
		PTS: media.Rescale(dts+s.CTO, t.timescale, rate) + shift}
	if t.video == nil {
		if len(s.Data) == 0 {
			return nil, false
		}
		au.Payload = [][]byte{s.Data}
		return au, false
	}
	nalus, err := fmp4.SplitNALUnits(s.Data)
	if err != nil {
		return nil, false
	}
	au.Payload, au.Key, changed = t.video.Fix(nalus)
	if changed {
		t.Track.Params = t.video.Params()
	}
	if len(au.Payload) == 0 {
		return nil, changed
	}
	return au, changed
}
