package flv

import (
	"encoding/binary"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

// VideoTag is a parsed video tag body.
type VideoTag struct {
	Codec media.Codec
	// FourCC is the codec of an enhanced RTMP tag, 0 for a legacy one.
	FourCC FourCC
	Type   PacketType
	// Key is the FLV frame type "key frame".
	Key bool
	// CompositionTime is PTS − DTS in milliseconds.
	CompositionTime int32
	// Params of a sequence header, with the picture size parsed from the SPS. They alias the body.
	Params media.Params
	// LengthSize is the NAL unit length size that a sequence header announces: 1, 2 or 4.
	LengthSize int
	// NALUs of coded frames. They alias the body, and the slice is reused by the next parse
	// into the same VideoTag.
	NALUs [][]byte
}

// ParseVideoTag parses a video tag body, legacy (AVC, and HEVC with codec id 12) or enhanced
// RTMP (FourCC 'avc1' and 'hvc1'; ModEx is skipped). lengthSize is the NAL unit length size of
// the stream's sequence header, 4 when unknown. Other codecs ('av01', 'vp09', Sorenson...)
// give an error wrapping ErrUnsupportedCodec that names them; bad bytes one wrapping ErrMalformed.
func ParseVideoTag(body []byte, lengthSize int, t *VideoTag) error {
	*t = VideoTag{NALUs: t.NALUs[:0]}
	if lengthSize < 1 || lengthSize > 4 {
		lengthSize = 4
	}
	if len(body) == 0 {
		return fmt.Errorf("flv: empty video tag: %w", ErrMalformed)
	}
	if body[0]&0x80 != 0 {
		return parseExVideo(body, lengthSize, t)
	}
	frameType, id := body[0]>>4, body[0]&0x0f
	if frameType == frameTypeCommand {
		t.Type = PacketOther // video info/command frame
		return nil
	}
	switch id {
	case videoCodecAVC:
		t.Codec = media.CodecH264
	case videoCodecHEVC:
		t.Codec = media.CodecH265
	default:
		name, ok := legacyVideoNames[id]
		if !ok {
			name = fmt.Sprintf("codec id %d", id)
		}
		return fmt.Errorf("flv: video %s: %w", name, ErrUnsupportedCodec)
	}
	t.Key = frameType == frameTypeKey
	if len(body) < 5 {
		return fmt.Errorf("flv: %s video tag of %d bytes, need 5: %w", t.Codec, len(body), ErrMalformed)
	}
	switch body[1] { // AVCPacketType
	case 0:
		return t.parseConfig(body[5:])
	case 1:
		t.Type, t.CompositionTime = PacketCodedFrames, int24(body[2:])
		return t.parseFrames(body[5:], lengthSize)
	case 2:
		t.Type = PacketSequenceEnd
		return nil
	}
	return fmt.Errorf("flv: %s video packet type %d: %w", t.Codec, body[1], ErrMalformed)
}

// parseExVideo parses an enhanced RTMP video tag (ExVideoTagHeader).
func parseExVideo(body []byte, lengthSize int, t *VideoTag) error {
	frameType, pt := body[0]>>4&0x07, body[0]&0x0f
	p, err := skipModEx(body, 1, &pt)
	if err != nil {
		return err
	}
	if frameType == frameTypeCommand && pt != exMetadata {
		t.Type = PacketOther
		return nil
	}
	if t.FourCC, t.Codec, p, err = exCodec(body, p, "video", pt == exVideoMultitrack, videoCodec); err != nil {
		return err
	}
	t.Key = frameType == frameTypeKey
	switch pt {
	case exSequenceStart:
		return t.parseConfig(body[p:])
	case exCodedFrames:
		if len(body) < p+3 {
			return fmt.Errorf("flv: %s coded frames without composition time: %w", t.FourCC, ErrMalformed)
		}
		t.Type, t.CompositionTime = PacketCodedFrames, int24(body[p:])
		return t.parseFrames(body[p+3:], lengthSize)
	case exCodedFramesX:
		t.Type = PacketCodedFrames
		return t.parseFrames(body[p:], lengthSize)
	case exSequenceEnd:
		t.Type = PacketSequenceEnd
		return nil
	case exMetadata, exMPEG2TSSeqStart:
		t.Type = PacketOther
		return nil
	}
	return fmt.Errorf("flv: %s video packet type %d: %w", t.FourCC, pt, ErrMalformed)
}

// skipModEx skips the modifier extensions of enhanced RTMP v2 starting at p and returns where
// the tag goes on, with the packet type that follows them in *pt.
func skipModEx(body []byte, p int, pt *byte) (int, error) {
	for *pt == exModEx {
		if p >= len(body) {
			return p, fmt.Errorf("flv: ModEx truncated at %d: %w", p, ErrMalformed)
		}
		size := int(body[p]) + 1
		p++
		if size == 256 {
			if p+2 > len(body) {
				return p, fmt.Errorf("flv: ModEx size truncated at %d: %w", p, ErrMalformed)
			}
			size = int(binary.BigEndian.Uint16(body[p:])) + 1
			p += 2
		}
		p += size
		if p >= len(body) {
			return p, fmt.Errorf("flv: ModEx data of %d bytes overruns the tag: %w", size, ErrMalformed)
		}
		*pt = body[p] & 0x0f // the high nibble is the ModEx type
		p++
	}
	return p, nil
}

func (t *VideoTag) parseConfig(b []byte) error {
	t.Type = PacketSequenceHeader
	var err error
	if t.Codec == media.CodecH265 {
		t.Params, t.LengthSize, err = parseHEVCConfig(b)
	} else {
		t.Params, t.LengthSize, err = parseAVCConfig(b)
	}
	return err
}

func (t *VideoTag) parseFrames(b []byte, lengthSize int) error {
	var err error
	t.NALUs, err = splitAVCC(b, lengthSize, t.NALUs)
	return err
}

// videoCodec and audioCodec are the codecs of the FourCCs enhanced RTMP tags name.
func videoCodec(f FourCC) (media.Codec, bool) {
	switch f {
	case FourCCAVC:
		return media.CodecH264, true
	case FourCCHEVC:
		return media.CodecH265, true
	}
	return 0, false
}

func audioCodec(f FourCC) (media.Codec, bool) {
	switch f {
	case FourCCAAC:
		return media.CodecAAC, true
	case FourCCMP3:
		return media.CodecMP3, true
	case FourCCOpus:
		return media.CodecOpus, true
	}
	return 0, false
}

// exCodec reads the FourCC of an enhanced tag of kind ("audio" or "video") at p, after its
// ModEx entries, and its codec by codecOf; it refuses multitrack tags. It returns where the
// tag goes on.
func exCodec(body []byte, p int, kind string, multitrack bool, codecOf func(FourCC) (media.Codec, bool)) (FourCC, media.Codec, int, error) {
	if multitrack {
		return 0, 0, p, fmt.Errorf("flv: enhanced RTMP multitrack %s: %w", kind, ErrUnsupportedCodec)
	}
	if len(body) < p+4 {
		return 0, 0, p, fmt.Errorf("flv: enhanced %s tag of %d bytes without FourCC: %w", kind, len(body), ErrMalformed)
	}
	fourCC := FourCC(binary.BigEndian.Uint32(body[p:]))
	codec, ok := codecOf(fourCC)
	if !ok {
		return fourCC, 0, p + 4, fmt.Errorf("flv: %s FourCC %s: %w", kind, fourCC, ErrUnsupportedCodec)
	}
	return fourCC, codec, p + 4, nil
}
