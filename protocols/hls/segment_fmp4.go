package hls

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// errNoTracks is returned when a rendition has no track sluice carries.
var errNoTracks = errors.New("no supported track (H.264, H.265, AAC, MP3, Opus)")

// fmp4Reader reads fMP4 segments (moof/mdat) against the init segment of EXT-X-MAP, with
// packager/fmp4's reader. Timestamps come from each fragment's tfdt and the sample durations.
type fmp4Reader struct {
	samples  *fmp4.Reader
	conv     []*livepull.TrackUnits // by the reader's track index; Track.ID is the index
	announce bool                   // tracks to announce with the next segment
}

// newFMP4Reader reads an init segment. Tracks of codecs sluice does not carry are left out.
func newFMP4Reader(init []byte) (*fmp4Reader, error) {
	its, err := fmp4.ReadInit(init)
	if err != nil {
		return nil, fmt.Errorf("init segment: %w", err)
	}
	if len(its) == 0 {
		return nil, errNoTracks
	}
	r := &fmp4Reader{samples: fmp4.NewReader(its), announce: true}
	for i := range its {
		t := livepull.NewTrackUnits(&its[i])
		t.Track.ID = i
		if !t.Ready() {
			return nil, fmt.Errorf("init segment: %s track %d without parameter sets", t.Track.Codec, its[i].ID)
		}
		r.conv = append(r.conv, t)
	}
	return r, nil
}

func (r *fmp4Reader) segment(b []byte) (tracks []media.Track, units []*media.AccessUnit, err error) {
	samples, err := r.samples.Segment(b)
	if err != nil {
		return nil, nil, fmt.Errorf("segment: %w", err)
	}
	for _, s := range samples {
		au, changed := r.conv[s.Track].Unit(s, 0)
		r.announce = r.announce || changed
		if au != nil {
			units = append(units, au)
		}
	}
	if r.announce {
		r.announce = false
		for _, t := range r.conv {
			tracks = append(tracks, t.Track)
		}
	}
	return tracks, units, nil
}
