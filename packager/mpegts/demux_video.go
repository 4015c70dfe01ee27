package mpegts

import (
	"bytes"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// onVideo turns one PES of H.264 or H.265 into an access unit: NAL units without start codes,
// AUDs dropped, parameter sets captured and prepended to key frames that lack them. Units
// before the first decodable key frame are dropped.
func (d *Demuxer) onVideo(s *esStream, pts, dts int64, es []byte) {
	s.nalus = splitAnnexB(es, s.nalus[:0])
	var key, hasVPS, hasSPS, hasPPS bool
	size, count := 0, 0
	for _, n := range s.nalus {
		switch nal.Classify(s.codec, n) {
		case nal.AUD:
			continue
		case nal.VPS:
			hasVPS = true
			s.vps = keepParam(s.vps, n)
		case nal.SPS:
			hasSPS = true
			if !bytes.Equal(s.sps, n) {
				s.sps = bytes.Clone(n)
				s.track.Params.Width, s.track.Params.Height = nal.VideoSize(s.codec, n)
			}
		case nal.PPS:
			hasPPS = true
			s.pps = keepParam(s.pps, n)
		case nal.Key:
			key = true
		}
		size += len(n)
		count++
	}
	h265 := s.codec == media.CodecH265
	if !s.ready && s.sps != nil && s.pps != nil && (s.vps != nil || !h265) {
		s.ready = true
	}
	s.track.Params.VPS, s.track.Params.SPS, s.track.Params.PPS = s.vps, s.sps, s.pps
	if count == 0 {
		return
	}
	if !s.sawKey {
		if !key || !s.ready {
			d.stats.DroppedUnits++
			return
		}
		s.sawKey = true
	}

	var prefix [3][]byte
	np := 0
	if key {
		if h265 && !hasVPS {
			prefix[np], np = s.vps, np+1
		}
		if !hasSPS {
			prefix[np], np = s.sps, np+1
		}
		if !hasPPS {
			prefix[np], np = s.pps, np+1
		}
	}
	payload := make([][]byte, 0, np+count)
	payload = append(payload, prefix[:np]...)
	data := make([]byte, size)
	off := 0
	for _, n := range s.nalus {
		if nal.Classify(s.codec, n) == nal.AUD {
			continue
		}
		k := copy(data[off:], n)
		payload = append(payload, data[off:off+k:off+k])
		off += k
	}
	d.emit(s, &media.AccessUnit{PTS: pts, DTS: dts, Key: key, Payload: payload})
}

// keepParam returns a private copy of a parameter set when it changed.
func keepParam(old, n []byte) []byte {
	if bytes.Equal(old, n) {
		return old
	}
	return bytes.Clone(n)
}
