package flv

import (
	"encoding/binary"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
)

// splitAVCC appends to dst the NAL units of length-prefixed data (ISO/IEC 14496-15); they
// alias b.
func splitAVCC(b []byte, lengthSize int, dst [][]byte) ([][]byte, error) {
	for len(b) > 0 {
		if len(b) < lengthSize {
			return dst, fmt.Errorf("flv: %d bytes left for a %d-byte NAL unit length: %w", len(b), lengthSize, ErrMalformed)
		}
		var n uint32
		for _, c := range b[:lengthSize] {
			n = n<<8 | uint32(c)
		}
		b = b[lengthSize:]
		if uint64(n) > uint64(len(b)) {
			return dst, fmt.Errorf("flv: NAL unit of %d bytes with %d left: %w", n, len(b), ErrMalformed)
		}
		if n > 0 {
			dst = append(dst, b[:n:n])
		}
		b = b[n:]
	}
	return dst, nil
}

func appendAVCC(dst []byte, n []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(n)))
	return append(dst, n...)
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
	if len(n) == 0 {
		return naluOther
	}
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
