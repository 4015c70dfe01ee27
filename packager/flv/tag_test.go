package flv

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

type tagWant struct {
	err                     error
	codec                   media.Codec
	typ                     PacketType
	key                     bool
	cts                     int32
	nalus                   int
	width                   int
	rate, channels, samples int
}

type tagCase struct {
	name string
	typ  TagType
	body []byte
	want tagWant
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var (
	h264Params = media.Params{SPS: mediatest.H264SPS, PPS: mediatest.H264PPS}
	h265Params = media.Params{VPS: mediatest.H265VPS, SPS: mediatest.H265SPS, PPS: mediatest.H265PPS}
	idrNALUs   = [][]byte{{0x06, 1, 2}, {0x65, 9, 9, 9}}
	hevcNALUs  = [][]byte{{19 << 1, 1, 7, 7}}
	opusHead   = cat([]byte("OpusHead"), []byte{1, 2, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0})
	avcSeq     = must(AppendVideoSequenceHeader(nil, media.CodecH264, h264Params))
	hevcSeq    = must(AppendVideoSequenceHeader(nil, media.CodecH265, h265Params))
	hevcFrames = AppendVideoFrame(nil, media.CodecH265, true, 80, hevcNALUs)
	mp3Tag     = cat([]byte{0x2f}, []byte{0xff, 0xfb, 0x90, 0x00}, make([]byte, 413))
)

// tagCases are shared by TestParseTag and the seeds of FuzzParseTag.
var tagCases = []tagCase{
	{"AVC sequence header", TagVideo, avcSeq, tagWant{codec: media.CodecH264, typ: PacketSequenceHeader, key: true, width: 320}},
	{"AVC NALUs with negative composition time", TagVideo, AppendVideoFrame(nil, media.CodecH264, false, -40, idrNALUs),
		tagWant{codec: media.CodecH264, typ: PacketCodedFrames, cts: -40, nalus: 2}},
	{"AVC end of sequence", TagVideo, []byte{0x17, 2, 0, 0, 0}, tagWant{codec: media.CodecH264, typ: PacketSequenceEnd, key: true}},
	{"HEVC with legacy codec id 12", TagVideo, cat([]byte{0x1c, 0, 0, 0, 0}, hevcSeq[5:]),
		tagWant{codec: media.CodecH265, typ: PacketSequenceHeader, key: true, width: 320}},
	{"hvc1 SequenceStart", TagVideo, hevcSeq, tagWant{codec: media.CodecH265, typ: PacketSequenceHeader, key: true, width: 320}},
	{"hvc1 CodedFrames", TagVideo, hevcFrames, tagWant{codec: media.CodecH265, typ: PacketCodedFrames, key: true, cts: 80, nalus: 1}},
	{"hvc1 CodedFramesX", TagVideo, AppendVideoFrame(nil, media.CodecH265, false, 0, hevcNALUs),
		tagWant{codec: media.CodecH265, typ: PacketCodedFrames, nalus: 1}},
	{"hvc1 CodedFrames behind a ModEx", TagVideo, cat([]byte{0x80 | 1<<4 | exModEx, 1, 0xaa, 0xbb, 0<<4 | exCodedFrames}, hevcFrames[1:]),
		tagWant{codec: media.CodecH265, typ: PacketCodedFrames, key: true, cts: 80, nalus: 1}},
	{"hvc1 metadata", TagVideo, cat([]byte{0x80 | 1<<4 | exMetadata}, []byte("hvc1"), []byte{2, 0, 1, 'x'}),
		tagWant{codec: media.CodecH265, typ: PacketOther, key: true}},
	{"enhanced command frame", TagVideo, []byte{0x80 | frameTypeCommand<<4 | exCodedFrames, 0}, tagWant{typ: PacketOther}},
	{"legacy command frame", TagVideo, []byte{frameTypeCommand<<4 | videoCodecAVC, 0}, tagWant{typ: PacketOther}},
	{"av01 is unsupported", TagVideo, cat([]byte{0x90}, []byte("av01"), []byte{0x81, 0, 0, 0}), tagWant{err: ErrUnsupportedCodec}},
	{"vp09 is unsupported", TagVideo, cat([]byte{0xa1}, []byte("vp09"), []byte{1, 2, 3}), tagWant{err: ErrUnsupportedCodec}},
	{"multitrack video is unsupported", TagVideo, []byte{0x80 | 1<<4 | exVideoMultitrack, 0, 'h', 'v', 'c', '1'}, tagWant{err: ErrUnsupportedCodec}},
	{"Sorenson H.263 is unsupported", TagVideo, []byte{0x22, 0, 0}, tagWant{err: ErrUnsupportedCodec}},
	{"empty video tag", TagVideo, nil, tagWant{err: ErrMalformed}},
	{"truncated AVC header", TagVideo, []byte{0x17, 1, 0}, tagWant{err: ErrMalformed}},
	{"NAL unit length overrun", TagVideo, []byte{0x27, 1, 0, 0, 0, 0, 0, 1, 0, 0x41}, tagWant{err: ErrMalformed}},
	{"truncated AVC configuration", TagVideo, avcSeq[:12], tagWant{err: ErrMalformed}},
	{"truncated HEVC configuration", TagVideo, hevcSeq[:30], tagWant{err: ErrMalformed}},
	{"hvc1 without FourCC", TagVideo, []byte{0x91, 'h', 'v'}, tagWant{err: ErrMalformed}},
	{"ModEx overrun", TagVideo, []byte{0x80 | exModEx, 0xff, 0xff}, tagWant{err: ErrMalformed}},

	{"AAC sequence header", TagAudio, []byte{0xaf, 0, 0x11, 0x90}, tagWant{codec: media.CodecAAC, typ: PacketSequenceHeader, rate: 48000, channels: 2}},
	{"AAC raw frame", TagAudio, []byte{0xaf, 1, 0x21, 0x10, 0x04}, tagWant{codec: media.CodecAAC, typ: PacketCodedFrames, samples: 1024}},
	{"MP3 frame", TagAudio, mp3Tag, tagWant{codec: media.CodecMP3, typ: PacketCodedFrames, rate: 44100, channels: 2, samples: 1152}},
	{"mp4a SequenceStart", TagAudio, cat([]byte{soundExHeader<<4 | exSequenceStart}, []byte("mp4a"), []byte{0x11, 0x90}),
		tagWant{codec: media.CodecAAC, typ: PacketSequenceHeader, rate: 48000, channels: 2}},
	{"Opus SequenceStart", TagAudio, cat([]byte{soundExHeader<<4 | exSequenceStart}, []byte("Opus"), opusHead),
		tagWant{codec: media.CodecOpus, typ: PacketSequenceHeader, rate: 48000, channels: 2}},
	{"Opus CodedFrames", TagAudio, cat([]byte{soundExHeader<<4 | exCodedFrames}, []byte("Opus"), []byte{0xfc, 1, 2}),
		tagWant{codec: media.CodecOpus, typ: PacketCodedFrames, rate: 48000, channels: 2, samples: 960}},
	{"fLaC is unsupported", TagAudio, cat([]byte{soundExHeader<<4 | exCodedFrames}, []byte("fLaC"), []byte{1}), tagWant{err: ErrUnsupportedCodec}},
	{"multitrack audio is unsupported", TagAudio, []byte{soundExHeader<<4 | exAudioMultitrack, 0}, tagWant{err: ErrUnsupportedCodec}},
	{"Speex is unsupported", TagAudio, []byte{0xb6, 1, 2}, tagWant{err: ErrUnsupportedCodec}},
	{"Speex is unsupported, as media says it", TagAudio, []byte{0xb6, 1, 2}, tagWant{err: media.ErrUnsupportedCodec}},
	{"bad AudioSpecificConfig", TagAudio, []byte{0xaf, 0, 0xff}, tagWant{err: ErrMalformed}},
	{"AAC tag of one byte", TagAudio, []byte{0xaf}, tagWant{err: ErrMalformed}},
	{"MP3 without a frame header", TagAudio, []byte{0x2f, 1, 2, 3, 4, 5}, tagWant{err: ErrMalformed}},
}

func TestParseTag(t *testing.T) {
	var vt VideoTag
	var at AudioTag
	for _, tc := range tagCases {
		t.Run(tc.name, func(t *testing.T) {
			var got tagWant
			var err error
			if tc.typ == TagVideo {
				err = ParseVideoTag(tc.body, 4, &vt)
				got = tagWant{codec: vt.Codec, typ: vt.Type, key: vt.Key, cts: vt.CompositionTime, nalus: len(vt.NALUs), width: vt.Params.Width}
			} else {
				err = ParseAudioTag(tc.body, &at)
				got = tagWant{codec: at.Codec, typ: at.Type, rate: at.Params.SampleRate, channels: at.Params.Channels, samples: at.Samples}
			}
			if tc.want.err != nil {
				if !errors.Is(err, tc.want.err) {
					t.Fatalf("error %v, want %v", err, tc.want.err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFourCCString(t *testing.T) {
	if s := FourCCHEVC.String(); s != "hvc1" {
		t.Errorf("FourCCHEVC is %q", s)
	}
	if s := FourCC(binary.BigEndian.Uint32([]byte{0, 'a', 'b', 1})).String(); s != `"\x00ab\x01"` {
		t.Errorf("a FourCC with control bytes prints as %s", s)
	}
}
