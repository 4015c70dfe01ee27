package dash

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// repReader turns the media segments of one representation into access units of its track
// (au.Track 0), on the presentation timeline: shift moves the track's decode times so that 0
// is the presentation's time 0 (the period's start minus the presentationTimeOffset).
type repReader struct {
	ti       *fmp4.InitTrack
	conv     *livepull.TrackUnits
	next     uint64 // decode time after the last sample, for fragments without tfdt
	shift    int64  // in the track's clock rate
	announce bool   // the track is to be announced with the next units
}

// newRepReader makes the reader of a representation whose init segment gave ti. presentation
// is where the representation's media time 0 lies on the presentation timeline, in 90 kHz
// ticks.
func newRepReader(ti *fmp4.InitTrack, presentation int64) *repReader {
	return &repReader{ti: ti, conv: livepull.NewTrackUnits(ti), announce: true,
		shift: media.Rescale(presentation, 90000, ti.Track.ClockRate)}
}

// segment reads one media segment. tracks is the representation's track when it is to be
// announced (first, or after its parameter sets changed), else nil.
func (r *repReader) segment(b []byte) (tracks []media.Track, units []*media.AccessUnit, err error) {
	samples, next, err := fmp4.ReadSamples(b, r.ti, r.next)
	if err != nil {
		return nil, nil, err
	}
	r.next = next
	units = make([]*media.AccessUnit, 0, len(samples))
	for _, s := range samples {
		au, changed := r.conv.Unit(s, r.shift)
		r.announce = r.announce || changed
		if au != nil {
			units = append(units, au)
		}
	}
	if r.announce {
		r.announce = false
		tracks = []media.Track{r.conv.Track}
	}
	return tracks, units, nil
}
