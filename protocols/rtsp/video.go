package rtsp

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
)

// errNotReady means a unit was dropped while the track waits for its first decodable key frame.
var errNotReady = errors.New("waiting for a key frame with parameter sets")

// naluKind is what ingest needs to know of a NAL unit.
type naluKind uint8

const (
	naluOther naluKind = iota
	naluAUD
	naluVPS
	naluSPS
	naluPPS
	naluKey // an IDR picture (H.264) or an IRAP picture (H.265)
)

// classify tells the kind of a non-empty NAL unit.
func classify(c media.Codec, n []byte) naluKind {
	if c == media.CodecH265 {
		switch t := h265.NALUType(n[0] >> 1 & 0x3f); {
		case t == h265.NALUType_AUD_NUT:
			return naluAUD
		case t == h265.NALUType_VPS_NUT:
			return naluVPS
		case t == h265.NALUType_SPS_NUT:
			return naluSPS
		case t == h265.NALUType_PPS_NUT:
			return naluPPS
		case t >= h265.NALUType_BLA_W_LP && t <= h265.NALUType_RSV_IRAP_VCL23:
			return naluKey
		}
		return naluOther
	}
	switch h264.NALUType(n[0] & 0x1f) {
	case h264.NALUTypeAccessUnitDelimiter:
		return naluAUD
	case h264.NALUTypeSPS:
		return naluSPS
	case h264.NALUTypePPS:
		return naluPPS
	case h264.NALUTypeIDR:
		return naluKey
	}
	return naluOther
}

// dtsExtractor is mediacommon's H.264 or H.265 DTS extractor.
type dtsExtractor interface {
	Extract(au [][]byte, pts int64) (int64, error)
}

// videoTrack normalises the access units of one H.264 or H.265 track.
type videoTrack struct {
	codec         media.Codec
	vps, sps, pps []byte
	width, height int

	sawKey  bool
	dts     dtsExtractor
	mono    monotonic
	dtsErrs int64 // units whose DTS could not be derived from the picture order
}

// newVideoTrack returns the normaliser of a track with the parameter sets the SDP gave, if any.
func newVideoTrack(c media.Codec, vps, sps, pps []byte) *videoTrack {
	v := &videoTrack{codec: c}
	v.setParam(naluVPS, vps)
	v.setParam(naluSPS, sps)
	v.setParam(naluPPS, pps)
	v.resetDTS()
	return v
}

func (v *videoTrack) resetDTS() {
	if v.codec == media.CodecH265 {
		d := &h265.DTSExtractor{}
		d.Initialize()
		v.dts = d
		return
	}
	d := &h264.DTSExtractor{}
	d.Initialize()
	v.dts = d
}

// ready tells whether the parameter sets are known.
func (v *videoTrack) ready() bool {
	return v.sps != nil && v.pps != nil && (v.vps != nil || v.codec != media.CodecH265)
}

// params returns the track's parameters.
func (v *videoTrack) params() media.Params {
	return media.Params{VPS: v.vps, SPS: v.sps, PPS: v.pps, Width: v.width, Height: v.height}
}

// setParam keeps a private copy of a parameter set when it changed; empty ones are ignored.
func (v *videoTrack) setParam(k naluKind, n []byte) {
	if len(n) == 0 {
		return
	}
	switch k {
	case naluVPS:
		if !bytes.Equal(v.vps, n) {
			v.vps = bytes.Clone(n)
		}
	case naluSPS:
		if !bytes.Equal(v.sps, n) {
			v.sps = bytes.Clone(n)
			v.width, v.height = videoSize(v.codec, n)
		}
	case naluPPS:
		if !bytes.Equal(v.pps, n) {
			v.pps = bytes.Clone(n)
		}
	}
}

// unit turns the NAL units of one access unit, presented at pts (90 kHz), into a normalised
// unit with its own copy of the data. It fails with errNotReady before the first key frame.
func (v *videoTrack) unit(nalus [][]byte, pts int64) (*media.AccessUnit, error) {
	var key, hasVPS, hasSPS, hasPPS bool
	size, count := 0, 0
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		switch k := classify(v.codec, n); k {
		case naluAUD:
			continue
		case naluVPS:
			hasVPS = true
			v.setParam(k, n)
		case naluSPS:
			hasSPS = true
			v.setParam(k, n)
		case naluPPS:
			hasPPS = true
			v.setParam(k, n)
		case naluKey:
			key = true
		}
		size += len(n)
		count++
	}
	if count == 0 {
		return nil, errNotReady
	}
	if !v.sawKey {
		if !key || !v.ready() {
			return nil, errNotReady
		}
		v.sawKey = true
	}

	var prefix [3][]byte
	np := 0
	if key {
		if v.codec == media.CodecH265 && !hasVPS {
			prefix[np], np = v.vps, np+1
		}
		if !hasSPS {
			prefix[np], np = v.sps, np+1
		}
		if !hasPPS {
			prefix[np], np = v.pps, np+1
		}
	}
	payload := make([][]byte, 0, np+count)
	payload = append(payload, prefix[:np]...)
	data := make([]byte, size)
	off := 0
	for _, n := range nalus {
		if len(n) == 0 || classify(v.codec, n) == naluAUD {
			continue
		}
		k := copy(data[off:], n)
		payload = append(payload, data[off:off+k:off+k])
		off += k
	}

	dts, err := v.extractDTS(payload, pts)
	if err != nil {
		// The picture order cannot be read: present the unit as is, and start the extractor
		// over; it picks up again at the next key frame, whose parameter sets it needs.
		v.dtsErrs++
		v.resetDTS()
		dts = pts
	}
	// A step back of more than 10 s is a reset of the source's clock, not reordering.
	pts, dts = v.mono.fix(pts, dts, 10*90000)
	return &media.AccessUnit{PTS: pts, DTS: dts, Key: key, Payload: payload}, nil
}

// extractDTS runs the DTS extractor, a third-party parser of untrusted bytes: a panic there
// is an error here.
func (v *videoTrack) extractDTS(payload [][]byte, pts int64) (dts int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("DTS extractor: %v", r)
		}
	}()
	return v.dts.Extract(payload, pts)
}

// videoSize parses the picture size from an SPS; zero when it cannot.
func videoSize(c media.Codec, sps []byte) (w, h int) {
	// A third-party parser on untrusted bytes: a panic there must not take the server down.
	defer func() {
		if recover() != nil {
			w, h = 0, 0
		}
	}()
	switch c {
	case media.CodecH264:
		var s h264.SPS
		if s.Unmarshal(sps) == nil {
			w, h = s.Width(), s.Height()
		}
	case media.CodecH265:
		var s h265.SPS
		if s.Unmarshal(sps) == nil {
			w, h = s.Width(), s.Height()
		}
	}
	if w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 {
		return 0, 0
	}
	return w, h
}
