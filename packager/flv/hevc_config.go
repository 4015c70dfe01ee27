package flv

import (
	"encoding/binary"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// hvcCHeaderSize is the fixed part of an HEVCDecoderConfigurationRecord, before its arrays.
const hvcCHeaderSize = 23

// parseHEVCConfig reads an HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 8.3.3.1): the
// first VPS, SPS and PPS, which alias b, and the NAL unit length size.
func parseHEVCConfig(b []byte) (p media.Params, lengthSize int, err error) {
	if len(b) < hvcCHeaderSize {
		return p, 0, fmt.Errorf("flv: HEVC configuration of %d bytes, need %d: %w", len(b), hvcCHeaderSize, ErrMalformed)
	}
	lengthSize = int(b[21]&0x03) + 1
	arrays := int(b[22])
	pos := hvcCHeaderSize
	for range arrays {
		if pos+3 > len(b) {
			return p, 0, fmt.Errorf("flv: HEVC configuration truncated at %d: %w", pos, ErrMalformed)
		}
		typ := b[pos] & 0x3f
		count := int(binary.BigEndian.Uint16(b[pos+1:]))
		pos += 3
		for range count {
			nalu, next, err := parameterSet(b, pos, "HEVC")
			if err != nil {
				return p, 0, err
			}
			switch h265.NALUType(typ) {
			case h265.NALUType_VPS_NUT:
				p.VPS = first(p.VPS, nalu)
			case h265.NALUType_SPS_NUT:
				p.SPS = first(p.SPS, nalu)
			case h265.NALUType_PPS_NUT:
				p.PPS = first(p.PPS, nalu)
			}
			pos = next
		}
	}
	if p.VPS == nil || p.SPS == nil || p.PPS == nil {
		return p, 0, fmt.Errorf("flv: HEVC configuration without VPS, SPS or PPS: %w", ErrMalformed)
	}
	p.Width, p.Height = nal.VideoSize(media.CodecH265, p.SPS)
	return p, lengthSize, nil
}

func first(have, b []byte) []byte {
	if have != nil {
		return have
	}
	return b
}

// appendHEVCConfig writes an HEVCDecoderConfigurationRecord with one VPS, SPS and PPS and
// 4-byte NAL unit lengths; profile, tier, level, chroma format and bit depths come from the SPS.
func appendHEVCConfig(dst []byte, p media.Params) ([]byte, error) {
	if len(p.VPS) == 0 || len(p.PPS) == 0 || len(p.VPS) > 0xffff || len(p.SPS) > 0xffff || len(p.PPS) > 0xffff {
		return dst, fmt.Errorf("flv: H.265 needs a VPS, an SPS and a PPS (have %d, %d and %d bytes)", len(p.VPS), len(p.SPS), len(p.PPS))
	}
	// The SPS RBSP holds, after the 2-byte NAL header, one byte of sps_video_parameter_set_id,
	// sps_max_sub_layers_minus1 and sps_temporal_id_nesting_flag, then the 12 bytes of the
	// general profile_tier_level that the record repeats.
	rbsp := h264.EmulationPreventionRemove(p.SPS)
	if len(rbsp) < 15 {
		return dst, fmt.Errorf("flv: H.265 SPS of %d bytes is too short", len(p.SPS))
	}
	layers := rbsp[2]>>1&0x07 + 1
	nested := rbsp[2] & 0x01
	chroma, depthLuma, depthChroma := spsFormat(p.SPS)
	dst = append(dst, 1)
	dst = append(dst, rbsp[3:15]...)
	dst = append(dst,
		0xf0, 0x00, // min_spatial_segmentation_idc 0
		0xfc,        // parallelismType 0 (unknown)
		0xfc|chroma, // chroma_format_idc
		0xf8|depthLuma,
		0xf8|depthChroma,
		0, 0, // avgFrameRate unknown
		layers<<3|nested<<2|3, // constantFrameRate 0, 4-byte lengths
		3)
	for _, ps := range [3]struct {
		typ h265.NALUType
		b   []byte
	}{{h265.NALUType_VPS_NUT, p.VPS}, {h265.NALUType_SPS_NUT, p.SPS}, {h265.NALUType_PPS_NUT, p.PPS}} {
		dst = append(dst, 0x80|byte(ps.typ), 0, 1) // array_completeness, one NAL unit
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(ps.b)))
		dst = append(dst, ps.b...)
	}
	return dst, nil
}

// spsFormat returns chroma_format_idc and the bit depths minus 8; 4:2:0 8-bit when the SPS
// cannot be parsed.
func spsFormat(sps []byte) (chroma, depthLuma, depthChroma byte) {
	chroma = 1
	defer func() { _ = recover() }() // a third-party parser on untrusted bytes
	var s h265.SPS
	if s.Unmarshal(sps) == nil {
		chroma, depthLuma, depthChroma = byte(s.ChromaFormatIdc&3), byte(s.BitDepthLumaMinus8&7), byte(s.BitDepthChromaMinus8&7)
	}
	return chroma, depthLuma, depthChroma
}
