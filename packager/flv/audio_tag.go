package flv

import (
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/opus"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mp3"
)

// aacFrameSamples is the duration of an AAC LC frame in samples.
const aacFrameSamples = 1024

// AudioTag is a parsed audio tag body.
type AudioTag struct {
	Codec media.Codec
	// FourCC is the codec of an enhanced RTMP tag, 0 for a legacy one.
	FourCC FourCC
	Type   PacketType
	// Params: the AAC AudioSpecificConfig (aliasing the body) with its sample rate and
	// channels; for MP3 and Opus frames, what the frame header tells.
	Params media.Params
	// Samples is the frame's duration in samples, 0 when unknown.
	Samples int
	// Frame is the coded frame; it aliases the body.
	Frame []byte
}

// ParseAudioTag parses an audio tag body: legacy AAC and MP3, or enhanced RTMP audio
// (FourCC 'mp4a', '.mp3', 'Opus'). Other codecs give an error wrapping ErrUnsupportedCodec
// that names them; bad bytes one wrapping ErrMalformed.
func ParseAudioTag(body []byte, t *AudioTag) error {
	*t = AudioTag{}
	if len(body) == 0 {
		return fmt.Errorf("flv: empty audio tag: %w", ErrMalformed)
	}
	switch format := body[0] >> 4; format {
	case soundAAC:
		t.Codec = media.CodecAAC
		if len(body) < 2 {
			return fmt.Errorf("flv: AAC tag of 1 byte: %w", ErrMalformed)
		}
		if body[1] == 0 {
			return t.parseAACConfig(body[2:])
		}
		return t.setFrame(body[2:])
	case soundMP3, soundMP38kHz:
		t.Codec = media.CodecMP3
		return t.setFrame(body[1:])
	case soundExHeader:
		return t.parseEx(body)
	default:
		name, ok := legacySoundNames[format]
		if !ok {
			name = fmt.Sprintf("sound format %d", format)
		}
		return fmt.Errorf("flv: audio %s: %w", name, ErrUnsupportedCodec)
	}
}

// parseEx parses an enhanced RTMP audio tag (ExAudioTagHeader).
func (t *AudioTag) parseEx(body []byte) error {
	pt := body[0] & 0x0f
	p, err := skipModEx(body, 1, &pt)
	if err != nil {
		return err
	}
	if t.FourCC, t.Codec, p, err = exCodec(body, p, "audio", pt == exAudioMultitrack, audioCodec); err != nil {
		return err
	}
	switch pt {
	case exSequenceStart:
		switch t.Codec {
		case media.CodecAAC:
			return t.parseAACConfig(body[p:])
		case media.CodecOpus:
			return t.parseOpusHead(body[p:])
		}
		t.Type = PacketOther
		return nil
	case exCodedFrames:
		return t.setFrame(body[p:])
	case exSequenceEnd:
		t.Type = PacketSequenceEnd
		return nil
	case exMetadata: // multichannel configuration
		t.Type = PacketOther
		return nil
	}
	return fmt.Errorf("flv: %s audio packet type %d: %w", t.FourCC, pt, ErrMalformed)
}

func (t *AudioTag) parseAACConfig(b []byte) error {
	t.Type = PacketSequenceHeader
	var asc mpeg4audio.AudioSpecificConfig
	if err := asc.Unmarshal(b); err != nil {
		return fmt.Errorf("flv: AAC AudioSpecificConfig %x: %w: %w", b, err, ErrMalformed)
	}
	t.Params = media.Params{AudioConfig: b, SampleRate: asc.SampleRate, Channels: asc.ChannelCount}
	return nil
}

// parseOpusHead reads the Opus identification header (RFC 7845 5.1) for the channel count.
func (t *AudioTag) parseOpusHead(b []byte) error {
	t.Type = PacketSequenceHeader
	if len(b) < 19 || string(b[:8]) != "OpusHead" || b[9] == 0 {
		return fmt.Errorf("flv: Opus sequence start without an OpusHead: %w", ErrMalformed)
	}
	t.Params = media.Params{SampleRate: 48000, Channels: int(b[9])}
	return nil
}

// setFrame takes a coded frame and what its header tells.
func (t *AudioTag) setFrame(b []byte) error {
	t.Type, t.Frame = PacketCodedFrames, b
	if len(b) == 0 {
		return fmt.Errorf("flv: %s tag without a frame: %w", t.Codec, ErrMalformed)
	}
	switch t.Codec {
	case media.CodecAAC:
		t.Samples = aacFrameSamples
	case media.CodecMP3:
		h, err := mp3.Parse(b)
		if err != nil {
			return fmt.Errorf("flv: MP3 frame header % x: %w", b[:min(4, len(b))], ErrMalformed)
		}
		t.Params = h.Params()
		if h.Len() == len(b) {
			t.Samples = h.SampleCount()
		}
	case media.CodecOpus:
		// The TOC byte's stereo flag (RFC 6716 3.1) stands in for a missing OpusHead.
		ch := 1
		if b[0]&0x04 != 0 {
			ch = 2
		}
		t.Params = media.Params{SampleRate: 48000, Channels: ch}
		t.Samples = int(opus.PacketDuration2(b))
	}
	return nil
}
