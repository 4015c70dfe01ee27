package mpegts

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

// TrackSource gives the tracks a stream carries now; *stream.Stream is one.
type TrackSource interface {
	Tracks() []media.Track
}

// Remuxer muxes the units of a stream into MPEG-TS for an output whose receiver sees one
// continuous program: timestamps keep increasing across the stream's discontinuities
// (media.Continuity, media.ContinuityGap after the last ones), and
// the muxer is rebuilt (new tables) when the tracks change at one. It allocates nothing per
// unit. A Remuxer is not safe for concurrent use.
type Remuxer struct {
	// OnTracks, when set, is called with the source's tracks when a discontinuity brings
	// tracks that mux differently from the current ones, before the muxer is rebuilt.
	OnTracks func(tracks []media.Track)

	src    TrackSource
	tracks []media.Track
	mux    *Muxer

	timeline media.Continuity // at 90 kHz
	last     []int64          // per track, the last output DTS in the track's clock
	has      []bool
	unit     media.AccessUnit // scratch copy with the output timestamps
}

// NewRemuxer returns a Remuxer of the given tracks, the source's when the output starts; at
// a discontinuity it asks src for the current ones. It fails as NewMuxer does.
func NewRemuxer(tracks []media.Track, src TrackSource) (*Remuxer, error) {
	r := &Remuxer{src: src}
	if err := r.setTracks(tracks); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Remuxer) setTracks(tracks []media.Track) error {
	mux, err := NewMuxer(nil, tracks)
	if err != nil {
		return err
	}
	r.mux, r.tracks = mux, tracks
	r.last, r.has = make([]int64, len(tracks)), make([]bool, len(tracks))
	return nil
}

// AppendAccessUnit appends the packets of au to dst and returns them with the unit's output
// DTS at 90 kHz. A unit of a track the output does not have is skipped (ok false). au is not
// modified.
func (r *Remuxer) AppendAccessUnit(dst []byte, au *media.AccessUnit) (out []byte, dts90 int64, ok bool, err error) {
	if au.Discontinuity {
		if tracks := r.src.Tracks(); !media.SameFormat(tracks, r.tracks) {
			if r.OnTracks != nil {
				r.OnTracks(tracks)
			}
			if err := r.setTracks(tracks); err != nil {
				return dst, 0, false, fmt.Errorf("tracks changed: %w", err)
			}
		}
	}
	if au.Track < 0 || au.Track >= len(r.tracks) {
		return dst, 0, false, nil
	}
	clock := r.tracks[au.Track].ClockRate
	off := media.Rescale(r.timeline.Offset(media.Rescale(au.DTS, clock, 90000), au.Discontinuity), 90000, clock)
	r.unit = *au
	r.unit.DTS += off
	r.unit.PTS += off
	t := au.Track
	if r.has[t] && r.unit.DTS <= r.last[t] {
		r.unit.DTS = r.last[t] + 1
	}
	r.unit.PTS = max(r.unit.PTS, r.unit.DTS)
	r.last[t], r.has[t] = r.unit.DTS, true
	dts90 = media.Rescale(r.unit.DTS, clock, 90000)
	out, err = r.mux.AppendAccessUnit(dst, &r.unit)
	r.unit = media.AccessUnit{} // hold no payload
	if err != nil {
		return dst, 0, false, err
	}
	return out, dts90, true, nil
}
