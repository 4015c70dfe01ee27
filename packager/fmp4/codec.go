package fmp4

import (
	"fmt"

	"github.com/Eyevinn/mp4ff/hevc"

	"github.com/sluicemedia/sluice/internal/media"
)

// CodecString returns the RFC 6381 codecs parameter of a track, as DASH and HLS name it:
// avc1.PPCCLL from the SPS, hvc1.P.C.Lxx.B from the HEVC SPS, mp4a.40.N from the
// AudioSpecificConfig, mp4a.6B (mp4a.69 below 32 kHz) for MP3, opus for Opus.
func CodecString(t media.Track) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = "", fmt.Errorf("fmp4: track %d (%s) codec string: %w: %v", t.ID, t.Codec, ErrMissingParams, r)
		}
	}()
	p := t.Params
	switch t.Codec {
	case media.CodecH264:
		// profile_idc, constraint flags and level_idc follow the one-byte NAL header.
		if len(p.SPS) < 4 {
			return "", fmt.Errorf("fmp4: track %d (%s) codec string: %w", t.ID, t.Codec, ErrMissingParams)
		}
		return fmt.Sprintf("avc1.%02X%02X%02X", p.SPS[1], p.SPS[2], p.SPS[3]), nil
	case media.CodecH265:
		sps, err := hevc.ParseSPSNALUnit(p.SPS)
		if err != nil {
			return "", fmt.Errorf("fmp4: track %d (%s) codec string: %w: %w", t.ID, t.Codec, ErrMissingParams, err)
		}
		return hevc.CodecString("hvc1", sps), nil
	case media.CodecAAC:
		aot, ok := audioObjectType(p.AudioConfig)
		if !ok {
			return "", fmt.Errorf("fmp4: track %d (%s) codec string: %w", t.ID, t.Codec, ErrMissingParams)
		}
		return fmt.Sprintf("mp4a.40.%d", aot), nil
	case media.CodecMP3:
		if t.ClockRate < 32000 {
			return "mp4a.69", nil
		}
		return "mp4a.6B", nil
	case media.CodecOpus:
		return "opus", nil
	}
	return "", fmt.Errorf("fmp4: track %d (%s): %w", t.ID, t.Codec, ErrUnsupportedCodec)
}

// audioObjectType reads the object type at the start of an AudioSpecificConfig (ISO/IEC
// 14496-3 1.6.2.1): 5 bits, with 31 escaping to 32 plus 6 more bits.
func audioObjectType(asc []byte) (int, bool) {
	if len(asc) < 1 {
		return 0, false
	}
	aot := int(asc[0] >> 3)
	if aot == 31 {
		if len(asc) < 2 {
			return 0, false
		}
		aot = 32 + (int(asc[0]&0x07)<<3 | int(asc[1]>>5))
	}
	return aot, aot != 0
}
