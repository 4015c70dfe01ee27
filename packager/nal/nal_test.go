package nal

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

var classifyCases = []struct {
	name  string
	codec media.Codec
	nalu  []byte
	want  Kind
}{
	{"H.264 empty", media.CodecH264, nil, Other},
	{"H.264 AUD", media.CodecH264, []byte{0x09, 0xf0}, AUD},
	{"H.264 SPS", media.CodecH264, []byte{0x67, 0x64}, SPS},
	{"H.264 PPS", media.CodecH264, []byte{0x68, 0xeb}, PPS},
	{"H.264 IDR", media.CodecH264, []byte{0x65, 0x88}, Key},
	{"H.264 non-IDR slice", media.CodecH264, []byte{0x41, 0x9a}, Other},
	{"H.264 SEI", media.CodecH264, []byte{0x06, 0x05}, Other},
	{"H.264 nal_ref_idc ignored", media.CodecH264, []byte{0x05}, Key},
	{"H.265 empty", media.CodecH265, []byte{}, Other},
	{"H.265 AUD", media.CodecH265, []byte{35 << 1, 1}, AUD},
	{"H.265 VPS", media.CodecH265, []byte{32 << 1, 1}, VPS},
	{"H.265 SPS", media.CodecH265, []byte{33 << 1, 1}, SPS},
	{"H.265 PPS", media.CodecH265, []byte{34 << 1, 1}, PPS},
	{"H.265 BLA_W_LP", media.CodecH265, []byte{16 << 1, 1}, Key},
	{"H.265 IDR_W_RADL", media.CodecH265, []byte{19 << 1, 1}, Key},
	{"H.265 CRA", media.CodecH265, []byte{21 << 1, 1}, Key},
	{"H.265 RSV_IRAP_VCL23", media.CodecH265, []byte{23 << 1, 1}, Key},
	{"H.265 RSV_VCL24", media.CodecH265, []byte{24 << 1, 1}, Other},
	{"H.265 TRAIL_R", media.CodecH265, []byte{1 << 1, 1}, Other},
	{"H.265 prefix SEI", media.CodecH265, []byte{39 << 1, 1}, Other},
	{"H.265 forbidden bit ignored", media.CodecH265, []byte{0x80 | 33<<1, 1}, SPS},
}

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		if got := Classify(tc.codec, tc.nalu); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

var videoSizeCases = []struct {
	name  string
	codec media.Codec
	sps   []byte
	w, h  int
}{
	{"H.264", media.CodecH264, mediatest.H264SPS, 320, 240},
	{"H.265", media.CodecH265, mediatest.H265SPS, 320, 240},
	{"H.264 truncated", media.CodecH264, mediatest.H264SPS[:4], 0, 0},
	{"H.265 truncated", media.CodecH265, mediatest.H265SPS[:6], 0, 0},
	{"H.264 SPS read as H.265", media.CodecH265, mediatest.H264SPS, 0, 0},
	{"empty", media.CodecH264, nil, 0, 0},
	{"not video", media.CodecAAC, mediatest.H264SPS, 0, 0},
}

func TestVideoSize(t *testing.T) {
	for _, tc := range videoSizeCases {
		if w, h := VideoSize(tc.codec, tc.sps); w != tc.w || h != tc.h {
			t.Errorf("%s: %dx%d, want %dx%d", tc.name, w, h, tc.w, tc.h)
		}
	}
}

// FuzzVideoSize: no panic on any bytes, and a size is whole or zero, within the bounds.
func FuzzVideoSize(f *testing.F) {
	for _, tc := range videoSizeCases {
		f.Add(tc.codec == media.CodecH265, tc.sps)
	}
	f.Fuzz(func(t *testing.T, h265 bool, sps []byte) {
		c := media.CodecH264
		if h265 {
			c = media.CodecH265
		}
		w, h := VideoSize(c, sps)
		if (w == 0) != (h == 0) || w < 0 || h < 0 || w > 1<<16 || h > 1<<16 {
			t.Fatalf("size %dx%d", w, h)
		}
		_ = Classify(c, sps)
		if !h265 {
			// The record of any SPS: its size follows from the parameter sets, nothing else.
			b, err := AppendAVCConfig(nil, sps, []byte{0x68})
			if err == nil && len(b) != 12+len(sps) && len(b) != 16+len(sps) {
				t.Fatalf("a record of %d bytes for an SPS of %d", len(b), len(sps))
			}
		}
	})
}
