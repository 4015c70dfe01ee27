package udp

import (
	"bytes"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// discGap is how far, at 90 kHz, output timestamps move past the last ones at a
// discontinuity: room for the tracks' interleaving, so that every track stays monotonic.
const discGap = 45000 // 0.5 s

// tsOut muxes a Reader's units into MPEG-TS for an output whose receiver sees one continuous
// program: timestamps keep increasing across the stream's discontinuities, and the muxer is
// rebuilt (new tables) when the tracks change. It allocates nothing per unit.
type tsOut struct {
	log    *slog.Logger
	tracks []media.Track
	mux    *mpegts.Muxer

	off90   int64 // added to every timestamp, at 90 kHz
	last90  int64 // newest output DTS, at 90 kHz
	hasLast bool
	last    []int64 // per track, the last output DTS in the track's clock
	has     []bool
	unit    media.AccessUnit // scratch copy with the output timestamps
}

func newTSOut(tracks []media.Track, log *slog.Logger) (*tsOut, error) {
	o := &tsOut{log: log}
	if err := o.setTracks(tracks); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *tsOut) setTracks(tracks []media.Track) error {
	mux, err := mpegts.NewMuxer(nil, tracks)
	if err != nil {
		return err
	}
	o.mux, o.tracks = mux, tracks
	o.last, o.has = make([]int64, len(tracks)), make([]bool, len(tracks))
	return nil
}

// appendUnit appends the packets of au to dst and returns them with the unit's output DTS at
// 90 kHz. A unit of a track the output does not have is skipped (ok false).
func (o *tsOut) appendUnit(dst []byte, au *media.AccessUnit, s *stream.Stream) (out []byte, dts90 int64, ok bool, err error) {
	if au.Discontinuity {
		if tracks := s.Tracks(); !sameTracks(tracks, o.tracks) {
			o.log.Info("tracks changed", "tracks", describe(tracks))
			if err := o.setTracks(tracks); err != nil {
				return dst, 0, false, fmt.Errorf("tracks changed: %w", err)
			}
		}
	}
	if au.Track < 0 || au.Track >= len(o.tracks) {
		return dst, 0, false, nil
	}
	clock := o.tracks[au.Track].ClockRate
	in90 := media.Rescale(au.DTS, clock, 90000)
	if au.Discontinuity && o.hasLast {
		o.off90 = o.last90 + discGap - in90
	}
	off := media.Rescale(o.off90, 90000, clock)
	o.unit = *au
	o.unit.DTS += off
	o.unit.PTS += off
	t := au.Track
	if o.has[t] && o.unit.DTS <= o.last[t] {
		o.unit.DTS = o.last[t] + 1
	}
	o.unit.PTS = max(o.unit.PTS, o.unit.DTS)
	o.last[t], o.has[t] = o.unit.DTS, true
	dts90 = media.Rescale(o.unit.DTS, clock, 90000)
	if !o.hasLast || dts90 > o.last90 {
		o.last90, o.hasLast = dts90, true
	}
	out, err = o.mux.AppendAccessUnit(dst, &o.unit)
	o.unit = media.AccessUnit{} // hold no payload
	if err != nil {
		return dst, 0, false, err
	}
	return out, dts90, true, nil
}

// sameTracks tells whether two track lists mux the same way.
func sameTracks(a, b []media.Track) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Codec != y.Codec || x.ClockRate != y.ClockRate ||
			x.Params.SampleRate != y.Params.SampleRate || x.Params.Channels != y.Params.Channels ||
			!bytes.Equal(x.Params.AudioConfig, y.Params.AudioConfig) {
			return false
		}
	}
	return true
}
