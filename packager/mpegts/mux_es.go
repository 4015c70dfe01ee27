package mpegts

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

var startCode4 = []byte{0, 0, 0, 1}

// maxADTSFrame is the largest raw AAC frame an ADTS header can describe (13-bit length).
const maxADTSFrame = 1<<13 - 1 - 7

// appendES writes the elementary stream bytes of one access unit.
func appendES(dst []byte, t *muxTrack, au *media.AccessUnit) ([]byte, error) {
	if len(au.Payload) == 0 {
		return dst, fmt.Errorf("mpegts: track %d: empty access unit at DTS %d", t.ID, au.DTS)
	}
	switch t.Codec {
	case media.CodecH264, media.CodecH265:
		return appendVideoES(dst, t, au), nil
	case media.CodecAAC:
		for _, f := range au.Payload {
			if len(f) > maxADTSFrame {
				return dst, fmt.Errorf("mpegts: track %d: AAC frame of %d bytes exceeds ADTS's %d", t.ID, len(f), maxADTSFrame)
			}
			dst = appendADTS(dst, t.aacObject, t.aacRate, t.aacChannels, len(f))
			dst = append(dst, f...)
		}
	case media.CodecMP3:
		for _, f := range au.Payload {
			dst = append(dst, f...)
		}
	case media.CodecOpus:
		for _, p := range au.Payload {
			// opus_control_header: 0x3ff prefix, no trim or extension, then the size in bytes
			// of 255 while the rest is at least 255.
			dst = append(dst, 0x7f, 0xe0)
			for n := len(p); ; n -= 255 {
				if n < 255 {
					dst = append(dst, byte(n))
					break
				}
				dst = append(dst, 0xff)
			}
			dst = append(dst, p...)
		}
	}
	return dst, nil
}

// appendVideoES writes Annex B: an AUD first, then the parameter sets a key frame lacks.
func appendVideoES(dst []byte, t *muxTrack, au *media.AccessUnit) []byte {
	if n0 := au.Payload[0]; len(n0) == 0 || nal.Classify(t.Codec, n0) != nal.AUD {
		aud := audH264
		if t.Codec == media.CodecH265 {
			aud = audH265
		}
		dst = append(dst, startCode4...)
		dst = append(dst, aud...)
	}
	if au.Key {
		var hasVPS, hasSPS, hasPPS bool
		for _, n := range au.Payload {
			if len(n) == 0 {
				continue
			}
			switch nal.Classify(t.Codec, n) {
			case nal.VPS:
				hasVPS = true
			case nal.SPS:
				hasSPS = true
			case nal.PPS:
				hasPPS = true
			}
		}
		if t.Codec == media.CodecH265 && !hasVPS {
			dst = appendNALUAnnexB(dst, t.Params.VPS)
		}
		if !hasSPS {
			dst = appendNALUAnnexB(dst, t.Params.SPS)
		}
		if !hasPPS {
			dst = appendNALUAnnexB(dst, t.Params.PPS)
		}
	}
	for _, n := range au.Payload {
		dst = appendNALUAnnexB(dst, n)
	}
	return dst
}

func appendNALUAnnexB(dst, n []byte) []byte {
	if len(n) == 0 {
		return dst
	}
	dst = append(dst, startCode4...)
	return append(dst, n...)
}
