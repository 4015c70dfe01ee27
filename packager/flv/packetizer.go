package flv

import (
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Packetizer builds the tag bodies of tracks and access units: sequence headers from the
// track parameters, legacy AVC with composition time, enhanced RTMP 'hvc1' for H.265, raw AAC
// and MP3. It reuses one buffer. A Packetizer is not safe for concurrent use.
type Packetizer struct {
	tracks []media.Track
	buf    []byte
}

// Carries tells whether the Packetizer, and so RTMP and FLV files, carries codec c: H.264,
// H.265 (enhanced RTMP), AAC and MP3; not Opus.
func Carries(c media.Codec) bool {
	switch c {
	case media.CodecH264, media.CodecH265, media.CodecAAC, media.CodecMP3:
		return true
	}
	return false
}

// NewPacketizer returns a Packetizer for the tracks. It fails for codecs FLV does not carry
// here (Opus) and for tracks without decoder parameters.
func NewPacketizer(tracks []media.Track) (*Packetizer, error) {
	p := &Packetizer{}
	for _, trk := range tracks {
		if trk.ClockRate <= 0 {
			return nil, fmt.Errorf("flv: track %d (%s): clock rate %d", trk.ID, trk.Codec, trk.ClockRate)
		}
		if !Carries(trk.Codec) {
			return nil, fmt.Errorf("flv: track %d: codec %s: %w", trk.ID, trk.Codec, ErrUnsupportedCodec)
		}
		if trk.Codec == media.CodecAAC && len(trk.Params.AudioConfig) == 0 {
			asc, err := mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC,
				SampleRate: trk.Params.SampleRate, ChannelCount: trk.Params.Channels}.Marshal()
			if err != nil {
				return nil, fmt.Errorf("flv: track %d (AAC) has no AudioSpecificConfig and %d Hz, %d channels: %w",
					trk.ID, trk.Params.SampleRate, trk.Params.Channels, err)
			}
			trk.Params.AudioConfig = asc
		}
		p.tracks = append(p.tracks, trk)
	}
	if len(p.tracks) == 0 {
		return nil, fmt.Errorf("flv: packetizer needs at least one track")
	}
	return p, nil
}

// SequenceHeaders returns the tags that configure decoders, one per video and AAC track, at
// timestamp ts; they are sent before the first access unit.
func (p *Packetizer) SequenceHeaders(ts uint32) ([]Tag, error) {
	var tags []Tag
	for _, trk := range p.tracks {
		var body []byte
		var err error
		typ := TagVideo
		switch trk.Codec {
		case media.CodecH264, media.CodecH265:
			body, err = AppendVideoSequenceHeader(nil, trk.Codec, trk.Params)
		case media.CodecAAC:
			typ = TagAudio
			body, err = AppendAudioSequenceHeader(nil, trk.Params)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("flv: track %d: %w", trk.ID, err)
		}
		tags = append(tags, Tag{Type: typ, Timestamp: ts, Body: body})
	}
	return tags, nil
}

// Packetize returns the tag of one access unit, timed at its DTS in milliseconds (wrapping at
// 2^32). The body is valid until the next call.
func (p *Packetizer) Packetize(au *media.AccessUnit) (Tag, error) {
	trk, err := p.track(au)
	if err != nil {
		return Tag{}, err
	}
	typ, body, err := appendUnit(p.buf[:0], trk, au)
	if err != nil {
		return Tag{}, err
	}
	p.buf = body
	return Tag{Type: typ, Timestamp: uint32(media.Rescale(au.DTS, trk.ClockRate, 1000)), Body: body}, nil
}

func (p *Packetizer) track(au *media.AccessUnit) (*media.Track, error) {
	for i := range p.tracks {
		if p.tracks[i].ID == au.Track {
			return &p.tracks[i], nil
		}
	}
	return nil, fmt.Errorf("flv: access unit of track %d: %w", au.Track, ErrUnknownTrack)
}

// appendUnit writes the tag body of one access unit.
func appendUnit(dst []byte, trk *media.Track, au *media.AccessUnit) (TagType, []byte, error) {
	if len(au.Payload) == 0 {
		return 0, dst, fmt.Errorf("flv: track %d: empty access unit at DTS %d", trk.ID, au.DTS)
	}
	switch trk.Codec {
	case media.CodecH264, media.CodecH265:
		cts := media.Rescale(au.PTS-au.DTS, trk.ClockRate, 1000)
		return TagVideo, AppendVideoFrame(dst, trk.Codec, au.Key, int32(cts), au.Payload), nil
	case media.CodecAAC:
		if len(au.Payload) != 1 {
			return 0, dst, fmt.Errorf("flv: track %d: AAC unit of %d frames, FLV carries one a tag", trk.ID, len(au.Payload))
		}
	}
	dst, err := AppendAudioFrame(dst, trk.Codec, trk.Params, au.Payload...)
	return TagAudio, dst, err
}

// AppendVideoSequenceHeader writes the body of a video sequence header: a legacy AVC sequence
// header with an AVCDecoderConfigurationRecord, or an enhanced RTMP 'hvc1' SequenceStart with
// an HEVCDecoderConfigurationRecord.
func AppendVideoSequenceHeader(dst []byte, c media.Codec, p media.Params) ([]byte, error) {
	switch c {
	case media.CodecH264:
		dst = append(dst, frameTypeKey<<4|videoCodecAVC, 0, 0, 0, 0)
		return appendAVCConfig(dst, p)
	case media.CodecH265:
		dst = append(dst, 0x80|frameTypeKey<<4|exSequenceStart)
		dst = appendFourCC(dst, FourCCHEVC)
		return appendHEVCConfig(dst, p)
	}
	return dst, fmt.Errorf("flv: video sequence header for %s: %w", c, ErrUnsupportedCodec)
}

// AppendVideoFrame writes the body of a coded video frame: NAL units with 4-byte lengths
// (AUDs left out) and the composition time cts (PTS − DTS) in milliseconds. H.265 uses
// enhanced RTMP, CodedFramesX when cts is 0.
func AppendVideoFrame(dst []byte, c media.Codec, key bool, cts int32, nalus [][]byte) []byte {
	frameType := byte(2) // inter frame
	if key {
		frameType = frameTypeKey
	}
	if c == media.CodecH265 {
		if cts == 0 {
			dst = append(dst, 0x80|frameType<<4|exCodedFramesX)
			dst = appendFourCC(dst, FourCCHEVC)
		} else {
			dst = append(dst, 0x80|frameType<<4|exCodedFrames)
			dst = appendFourCC(dst, FourCCHEVC)
			dst = appendInt24(dst, cts)
		}
	} else {
		dst = append(dst, frameType<<4|videoCodecAVC, 1)
		dst = appendInt24(dst, cts)
	}
	for _, n := range nalus {
		if len(n) > 0 && nal.Classify(c, n) != nal.AUD {
			dst = appendAVCC(dst, n)
		}
	}
	return dst
}

// AppendAudioSequenceHeader writes the body of an AAC sequence header: the AudioSpecificConfig.
func AppendAudioSequenceHeader(dst []byte, p media.Params) ([]byte, error) {
	if len(p.AudioConfig) == 0 {
		return dst, fmt.Errorf("flv: AAC sequence header without an AudioSpecificConfig")
	}
	dst = append(dst, aacHeaderByte, 0)
	return append(dst, p.AudioConfig...), nil
}

// aacHeaderByte is SoundFormat AAC with the rate, size and type fields that FLV requires
// for AAC: 44 kHz, 16-bit, stereo; the AudioSpecificConfig tells the truth.
const aacHeaderByte = soundAAC<<4 | 3<<2 | 1<<1 | 1

// AppendAudioFrame writes the body of an audio tag: one raw AAC frame, or MP3 frames.
func AppendAudioFrame(dst []byte, c media.Codec, p media.Params, frames ...[]byte) ([]byte, error) {
	switch c {
	case media.CodecAAC:
		dst = append(dst, aacHeaderByte, 1)
	case media.CodecMP3:
		format, rate := byte(soundMP3), byte(3)
		switch r := p.SampleRate; {
		case r == 8000:
			format = soundMP38kHz
		case r >= 44100:
		case r >= 22050:
			rate = 2
		case r >= 11025:
			rate = 1
		default:
			rate = 0
		}
		stereo := byte(0)
		if p.Channels != 1 {
			stereo = 1
		}
		dst = append(dst, format<<4|rate<<2|1<<1|stereo)
	default:
		return dst, fmt.Errorf("flv: audio frame of %s: %w", c, ErrUnsupportedCodec)
	}
	for _, f := range frames {
		dst = append(dst, f...)
	}
	return dst, nil
}

func appendFourCC(dst []byte, f FourCC) []byte {
	return append(dst, byte(f>>24), byte(f>>16), byte(f>>8), byte(f))
}
