package nal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
)

// ErrAVCConfig is wrapped when an AVCDecoderConfigurationRecord cannot be written.
var ErrAVCConfig = errors.New("nal: AVC configuration")

// AppendAVCConfig appends an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1: the
// avcC box's body, and FLV's AVC sequence header) with sps, pps and 4-byte NAL unit lengths.
// Every profile but Baseline, Main and Extended (66, 77, 88) gets the record's extension,
// chroma_format and the bit depths as the SPS states them, with no SPS extension, as ffmpeg
// writes it: High 4:4:4 Predictive (244) included, which the 2017 text leaves out but whose
// readers (ffmpeg, MediaInfo) read the fields for.
func AppendAVCConfig(dst, sps, pps []byte) ([]byte, error) {
	if len(sps) < 4 || len(pps) == 0 || len(sps) > 0xffff || len(pps) > 0xffff {
		return dst, fmt.Errorf("%w: needs an SPS and a PPS (have %d and %d bytes)", ErrAVCConfig, len(sps), len(pps))
	}
	// profile_idc, the constraint flags and level_idc follow the SPS NAL header.
	dst = append(dst, 1, sps[1], sps[2], sps[3], 0xfc|3, 0xe0|1)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(sps)))
	dst = append(dst, sps...)
	dst = append(dst, 1)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(pps)))
	dst = append(dst, pps...)
	switch sps[1] {
	case 66, 77, 88:
		return dst, nil
	}
	chroma, luma, chromaDepth := avcFormat(sps)
	return append(dst, 0xfc|chroma, 0xf8|luma, 0xf8|chromaDepth, 0), nil
}

// avcFormat reads chroma_format_idc and the bit depths less 8 from an H.264 SPS: 4:2:0 and 8
// bits (1, 0, 0) when it does not state them or cannot be read.
func avcFormat(sps []byte) (chroma, luma, chromaDepth byte) {
	chroma = 1
	// A third-party parser on untrusted bytes: a panic there must not take the server down.
	defer func() {
		if recover() != nil {
			chroma, luma, chromaDepth = 1, 0, 0
		}
	}()
	var s h264.SPS
	if s.Unmarshal(sps) != nil {
		return 1, 0, 0
	}
	switch s.ProfileIdc {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		return byte(s.ChromaFormatIdc & 3), byte(s.BitDepthLumaMinus8 & 7), byte(s.BitDepthChromaMinus8 & 7)
	}
	return 1, 0, 0
}
