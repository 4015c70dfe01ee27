package dash

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/packager/nal"
)

// repReader turns the media segments of one representation into access units of its track
// (au.Track 0), on the presentation timeline: shift moves the track's decode times so that 0
// is the presentation's time 0 (the period's start minus the presentationTimeOffset).
type repReader struct {
	ti       *fmp4.InitTrack
	video    *nal.Fixer
	next     uint64 // decode time after the last sample, for fragments without tfdt
	shift    int64  // in the track's clock rate
	announce bool   // the track is to be announced with the next units
}

// newRepReader makes the reader of a representation whose init segment gave ti. presentation
// is where the representation's media time 0 lies on the presentation timeline, in 90 kHz
// ticks.
func newRepReader(ti *fmp4.InitTrack, presentation int64) *repReader {
	r := &repReader{ti: ti, announce: true, shift: media.Rescale(presentation, 90000, ti.Track.ClockRate)}
	if p := ti.Track.Params; ti.Track.Codec.IsVideo() {
		r.video = nal.NewFixer(ti.Track.Codec, p.VPS, p.SPS, p.PPS)
	}
	return r
}

// segment reads one media segment. tracks is the representation's track when it is to be
// announced (first, or after its parameter sets changed), else nil.
func (r *repReader) segment(b []byte) (tracks []media.Track, units []*media.AccessUnit, err error) {
	samples, next, err := fmp4.ReadSamples(b, r.ti, r.next)
	if err != nil {
		return nil, nil, err
	}
	r.next = next
	tr := &r.ti.Track
	ts := int(r.ti.Timescale)
	units = make([]*media.AccessUnit, 0, len(samples))
	for _, s := range samples {
		dts := int64(s.DTS)
		au := &media.AccessUnit{Key: true,
			DTS: media.Rescale(dts, ts, tr.ClockRate) + r.shift,
			PTS: media.Rescale(dts+s.CTO, ts, tr.ClockRate) + r.shift}
		if r.video == nil {
			if len(s.Data) == 0 {
				continue
			}
			au.Payload = [][]byte{s.Data}
			units = append(units, au)
			continue
		}
		nalus, err := fmp4.SplitNALUnits(s.Data)
		if err != nil {
			continue // one broken sample: the next key frame recovers
		}
		var changed bool
		au.Payload, au.Key, changed = r.video.Fix(nalus)
		if changed {
			tr.Params = r.video.Params()
			r.announce = true
		}
		if len(au.Payload) == 0 {
			continue
		}
		units = append(units, au)
	}
	if r.announce {
		r.announce = false
		tracks = []media.Track{*tr}
	}
	return tracks, units, nil
}
