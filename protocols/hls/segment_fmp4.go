package hls

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/packager/nal"
)

// errNoTracks is returned when a rendition has no track sluice carries.
var errNoTracks = errors.New("no supported track (H.264, H.265, AAC, MP3, Opus)")

// fmp4Reader reads fMP4 segments (moof/mdat) against the init segment of EXT-X-MAP, with
// packager/fmp4's reader. Timestamps come from each fragment's tfdt and the sample durations.
type fmp4Reader struct {
	tracks   []media.Track
	samples  *fmp4.Reader
	conv     []*fmp4Track // by the reader's track index
	announce bool         // tracks to announce with the next segment
}

// fmp4Track converts the samples of one track of the init segment.
type fmp4Track struct {
	timescale uint32 // mdhd timescale
	video     *nal.Fixer
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
	for i, it := range its {
		t := &fmp4Track{timescale: it.Timescale}
		tr := it.Track
		tr.ID = i
		if p := tr.Params; tr.Codec.IsVideo() {
			t.video = nal.NewFixer(tr.Codec, p.VPS, p.SPS, p.PPS)
			if !t.video.Ready() {
				return nil, fmt.Errorf("init segment: %s track %d without parameter sets", tr.Codec, it.ID)
			}
		}
		r.tracks = append(r.tracks, tr)
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
		if au := r.unit(s); au != nil {
			units = append(units, au)
		}
	}
	if r.announce {
		r.announce = false
		tracks = r.tracks
	}
	return tracks, units, nil
}

// unit converts one sample; nil when it is dropped.
func (r *fmp4Reader) unit(s fmp4.Sample) *media.AccessUnit {
	t, tr := r.conv[s.Track], &r.tracks[s.Track]
	ts, dts := int(t.timescale), int64(s.DTS)
	au := &media.AccessUnit{Track: s.Track, Key: true,
		DTS: media.Rescale(dts, ts, tr.ClockRate), PTS: media.Rescale(dts+s.CTO, ts, tr.ClockRate)}
	if t.video == nil {
		if len(s.Data) == 0 {
			return nil
		}
		au.Payload = [][]byte{s.Data}
		return au
	}
	nalus, err := fmp4.SplitNALUnits(s.Data)
	if err != nil {
		return nil
	}
	var changed bool
	au.Payload, au.Key, changed = t.video.Fix(nalus)
	if changed {
		tr.Params = t.video.Params()
		r.announce = true
	}
	if len(au.Payload) == 0 {
		return nil
	}
	return au
}
