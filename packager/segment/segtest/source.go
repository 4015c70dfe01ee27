// Package segtest helps tests of the segment, hls and dash packages: a synthetic
// audio/video source and real clips made by ffmpeg, fed through a Segmenter.
package segtest

import (
	"bytes"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// Source generates a synthetic stream: video at FPS with a key frame every GOP frames
// (PTS two frames after DTS), and AAC frames, interleaved in time order. Arrival times follow
// the media clock from Wall.
type Source struct {
	// Video and Audio are the tracks; either may be the zero Track (absent).
	Video, Audio media.Track
	FPS, GOP     int
	// Wall is the arrival time of the first unit.
	Wall time.Time
	// FrameSize is the slice size in bytes (default 1000).
	FrameSize int

	frame, aframe int64
	disc          bool
	wallAt        time.Duration
}

// NewSource returns an H.264 + AAC source at 25 fps with a GOP of gop frames.
func NewSource(gop int, wall time.Time) *Source {
	return &Source{Video: mediatest.H264(0), Audio: mediatest.AAC(1), FPS: 25, GOP: gop, Wall: wall}
}

// Tracks returns the source's tracks.
func (s *Source) Tracks() []media.Track {
	var ts []media.Track
	if s.Video.Codec != media.CodecUnknown {
		ts = append(ts, s.Video)
	}
	if s.Audio.Codec != media.CodecUnknown {
		ts = append(ts, s.Audio)
	}
	return ts
}

// Elapsed returns the media time generated in this session.
func (s *Source) Elapsed() time.Duration {
	v := time.Duration(s.frame) * time.Second / time.Duration(max(s.FPS, 1))
	a := time.Duration(s.aframe) * 1024 * time.Second / 48000
	if s.Video.Codec == media.CodecUnknown {
		return a
	}
	if s.Audio.Codec == media.CodecUnknown {
		return v
	}
	return min(v, a)
}

// Next returns the next unit in time order.
func (s *Source) Next() *media.AccessUnit {
	hasV, hasA := s.Video.Codec != media.CodecUnknown, s.Audio.Codec != media.CodecUnknown
	vt := time.Duration(s.frame) * time.Second / time.Duration(max(s.FPS, 1))
	at := time.Duration(s.aframe) * 1024 * time.Second / 48000
	var au *media.AccessUnit
	var t time.Duration
	if hasV && (!hasA || vt <= at) {
		au, t = s.videoUnit(), vt
	} else {
		au, t = s.audioUnit(), at
	}
	au.Arrival = s.Wall.Add(s.wallAt + t)
	au.Discontinuity, s.disc = s.disc, false
	return au
}

func (s *Source) videoUnit() *media.AccessUnit {
	step := int64(90000 / max(s.FPS, 1))
	dts := s.frame * step
	key := s.GOP > 0 && s.frame%int64(s.GOP) == 0 || s.frame == 0
	size := s.FrameSize
	if size == 0 {
		size = 1000
	}
	slice := bytes.Repeat([]byte{0x9a}, size)
	au := &media.AccessUnit{Track: s.Video.ID, DTS: dts, PTS: dts + 2*step, Key: key}
	h265 := s.Video.Codec == media.CodecH265
	switch {
	case h265 && key:
		slice[0], slice[1] = 19<<1, 1
		au.Payload = [][]byte{s.Video.Params.VPS, s.Video.Params.SPS, s.Video.Params.PPS, slice}
	case h265:
		slice[0], slice[1] = 1<<1, 1
		au.Payload = [][]byte{slice}
	case key:
		slice[0] = 0x65
		au.Payload = [][]byte{s.Video.Params.SPS, s.Video.Params.PPS, slice}
	default:
		slice[0] = 0x41
		au.Payload = [][]byte{slice}
	}
	s.frame++
	return au
}

func (s *Source) audioUnit() *media.AccessUnit {
	ts := s.aframe * 1024
	s.aframe++
	return &media.AccessUnit{Track: s.Audio.ID, DTS: ts, PTS: ts, Key: true, Payload: [][]byte{bytes.Repeat([]byte{0x21}, 100)}}
}

// Restart begins a new publisher session after a gap: timestamps start again from zero,
// arrival times go on after the gap, and the next unit has Discontinuity set.
func (s *Source) Restart(gap time.Duration) {
	s.wallAt += s.Elapsed() + gap
	s.frame, s.aframe, s.disc = 0, 0, true
}

// Writer is what a Source feeds: a Segmenter.
type Writer interface {
	WriteUnit(au *media.AccessUnit) error
}

// Feed writes units until d more media time has been generated in this session.
func (s *Source) Feed(w Writer, d time.Duration) error {
	end := s.Elapsed() + d
	for s.Elapsed() < end {
		if err := w.WriteUnit(s.Next()); err != nil {
			return err
		}
	}
	return nil
}
