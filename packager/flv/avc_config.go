package flv

import (
	"encoding/binary"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// parseAVCConfig reads an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1): the first
// SPS and PPS, which alias b, and the NAL unit length size.
func parseAVCConfig(b []byte) (p media.Params, lengthSize int, err error) {
	if len(b) < 7 || b[0] != 1 {
		return p, 0, fmt.Errorf("flv: AVC configuration of %d bytes (version %d): %w", len(b), firstByte(b), ErrMalformed)
	}
	lengthSize = int(b[4]&0x03) + 1
	pos := 5
	for i, k := range [2]int{0x1f, 0xff} { // SPS count in 5 bits, PPS count in 8
		if pos >= len(b) {
			return p, 0, fmt.Errorf("flv: AVC configuration truncated at %d: %w", pos, ErrMalformed)
		}
		count := int(b[pos]) & k
		pos++
		for range count {
			ps, next, err := parameterSet(b, pos, "AVC")
			if err != nil {
				return p, 0, err
			}
			switch {
			case i == 0 && p.SPS == nil:
				p.SPS = ps
			case i == 1 && p.PPS == nil:
				p.PPS = ps
			}
			pos = next
		}
	}
	if p.SPS == nil || p.PPS == nil {
		return p, 0, fmt.Errorf("flv: AVC configuration without SPS or PPS: %w", ErrMalformed)
	}
	p.Width, p.Height = nal.VideoSize(media.CodecH264, p.SPS)
	return p, lengthSize, nil
}

// appendAVCConfig writes an AVCDecoderConfigurationRecord with one SPS and one PPS and
// 4-byte NAL unit lengths (nal.AppendAVCConfig: the extension of the High profiles included).
func appendAVCConfig(dst []byte, p media.Params) ([]byte, error) {
	b, err := nal.AppendAVCConfig(dst, p.SPS, p.PPS)
	if err != nil {
		return dst, fmt.Errorf("flv: H.264: %w", err)
	}
	return b, nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// parameterSet reads one parameter set of a decoder configuration record (codec names it in
// errors) at pos: a 16-bit length, then that many bytes, at least one. It returns the set,
// capped, and where the record goes on.
func parameterSet(b []byte, pos int, codec string) (ps []byte, next int, err error) {
	if pos+2 > len(b) {
		return nil, pos, fmt.Errorf("flv: %s configuration truncated at %d: %w", codec, pos, ErrMalformed)
	}
	n := int(binary.BigEndian.Uint16(b[pos:]))
	pos += 2
	if pos+n > len(b) || n == 0 {
		return nil, pos, fmt.Errorf("flv: %s parameter set of %d bytes at %d overruns %d: %w", codec, n, pos, len(b), ErrMalformed)
	}
	return b[pos : pos+n : pos+n], pos + n, nil
}
