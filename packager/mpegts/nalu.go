package mpegts

import (
	"bytes"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
)

var startCode = []byte{0, 0, 1}

// splitAnnexB appends to dst the NAL units of an Annex B byte stream, without start codes
// or trailing zero bytes; bytes before the first start code are ignored. They alias b.
func splitAnnexB(b []byte, dst [][]byte) [][]byte {
	start := -1
	for i := 0; ; {
		j := bytes.Index(b[i:], startCode)
		if j < 0 {
			break
		}
		j += i
		if start >= 0 {
			dst = appendNALU(dst, b[start:j])
		}
		start = j + len(startCode)
		i = start
	}
	if start >= 0 {
		dst = appendNALU(dst, b[start:])
	}
	return dst
}

func appendNALU(dst [][]byte, n []byte) [][]byte {
	// Zero bytes before a start code belong to it (a 4-byte start code, trailing_zero_8bits).
	for len(n) > 0 && n[len(n)-1] == 0 {
		n = n[:len(n)-1]
	}
	if len(n) == 0 {
		return dst
	}
	return append(dst, n)
}

// naluKind is what the packager needs to know of a NAL unit.
type naluKind uint8

const (
	naluOther naluKind = iota
	naluAUD
	naluVPS
	naluSPS
	naluPPS
	naluKey // an IDR picture (H.264) or an IRAP picture (H.265)
)

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

// Access unit delimiters the muxer inserts: H.264 primary_pic_type 7 (any slice type),
// H.265 pic_type 2 (any slice type), each with its stop bit.
var (
	audH264 = []byte{0x09, 0xf0}
	audH265 = []byte{0x46, 0x01, 0x50}
)
