// Package nal tells what ingest and the packagers need to know of H.264 and H.265 NAL units
// (ITU-T H.264 7.4.1, H.265 7.4.2): their kind, and the picture size an SPS gives. NAL units
// are passed without start codes or length prefixes.
package nal

import (
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
)

// Kind is what ingest and the packagers need to know of a NAL unit.
type Kind uint8

// Kinds of NAL units.
const (
	Other Kind = iota // anything else: non-IDR slices, SEI, filler, ...
	AUD               // access unit delimiter
	VPS               // video parameter set (H.265 only)
	SPS               // sequence parameter set
	PPS               // picture parameter set
	Key               // an IDR picture (H.264) or an IRAP picture (H.265)
)

// Classify tells the kind of a NAL unit of codec c (H.265, else read as H.264); an empty
// one is Other.
func Classify(c media.Codec, n []byte) Kind {
	if len(n) == 0 {
		return Other
	}
	if c == media.CodecH265 {
		switch t := h265.NALUType(n[0] >> 1 & 0x3f); {
		case t == h265.NALUType_AUD_NUT:
			return AUD
		case t == h265.NALUType_VPS_NUT:
			return VPS
		case t == h265.NALUType_SPS_NUT:
			return SPS
		case t == h265.NALUType_PPS_NUT:
			return PPS
		case t >= h265.NALUType_BLA_W_LP && t <= h265.NALUType_RSV_IRAP_VCL23:
			return Key
		}
		return Other
	}
	switch h264.NALUType(n[0] & 0x1f) {
	case h264.NALUTypeAccessUnitDelimiter:
		return AUD
	case h264.NALUTypeSPS:
		return SPS
	case h264.NALUTypePPS:
		return PPS
	case h264.NALUTypeIDR:
		return Key
	}
	return Other
}

// VideoSize parses the picture size from an H.264 or H.265 SPS; zero when it cannot, or when
// a side is over 65536.
func VideoSize(c media.Codec, sps []byte) (w, h int) {
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
