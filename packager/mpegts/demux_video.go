package mpegts

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// onVideo turns one PES of H.264 or H.265 into an access unit through the track's nal.Fixer
// (AUDs dropped, parameter sets learned and put in front of key frames that lack them; a key
// frame is one only with its parameter sets known), with its own copy of the bytes. Units
// before the first key frame go on: the stream's publisher drops them.
func (d *Demuxer) onVideo(s *esStream, pts, dts int64, es []byte) {
	s.nalus = splitAnnexB(es, s.nalus[:0])
	if s.fix == nil {
		s.fix = nal.NewFixer(s.codec, nil, nil, nil)
	}
	units, key, _ := s.fix.FixCopy(s.nalus)
	p := s.fix.Params()
	s.track.Params.VPS, s.track.Params.SPS, s.track.Params.PPS = p.VPS, p.SPS, p.PPS
	if p.Width > 0 {
		s.track.Params.Width, s.track.Params.Height = p.Width, p.Height
	}
	s.ready = s.ready || s.fix.Ready()
	if len(units) == 0 {
		return
	}
	d.emit(s, &media.AccessUnit{PTS: pts, DTS: dts, Key: key, Payload: units})
}
