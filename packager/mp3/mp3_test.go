package mp3

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name               string
		b                  []byte
		err                bool
		notLayer3          bool
		len, rate, samples int
		channels           int
	}{
		// MPEG-1 layer 3, 128 kbit/s, 44.1 kHz: 144 × 128000 / 44100 = 417 bytes.
		{name: "MPEG-1 stereo", b: []byte{0xff, 0xfb, 0x90, 0x00, 0}, len: 417, rate: 44100, samples: 1152, channels: 2},
		// The same with the padding bit and the mono channel mode.
		{name: "MPEG-1 mono, padded", b: []byte{0xff, 0xfb, 0x92, 0xc0, 0}, len: 418, rate: 44100, samples: 1152, channels: 1},
		// MPEG-2 layer 3, 64 kbit/s, 22.05 kHz: 72 × 64000 / 22050 = 208 bytes (mediacommon's
		// FrameLen would say 417).
		{name: "MPEG-2 joint stereo", b: []byte{0xff, 0xf3, 0x80, 0x40, 0}, len: 208, rate: 22050, samples: 576, channels: 2},
		{name: "layer 2", b: []byte{0xff, 0xfd, 0x90, 0x00, 0}, err: true, notLayer3: true},
		{name: "no sync word", b: []byte{0x00, 0xfb, 0x90, 0x00, 0}, err: true},
		{name: "bad bit rate", b: []byte{0xff, 0xfb, 0xf0, 0x00, 0}, err: true},
		{name: "short", b: []byte{0xff, 0xfb}, err: true},
	} {
		h, err := Parse(tc.b)
		if (err != nil) != tc.err || errors.Is(err, ErrNotLayer3) != tc.notLayer3 {
			t.Errorf("%s: error %v, want error %v (not layer 3: %v)", tc.name, err, tc.err, tc.notLayer3)
			continue
		}
		if tc.err {
			continue
		}
		p := h.Params()
		if h.Len() != tc.len || p.SampleRate != tc.rate || h.SampleCount() != tc.samples || p.Channels != tc.channels {
			t.Errorf("%s: len %d, rate %d, samples %d, channels %d; want %d, %d, %d, %d", tc.name,
				h.Len(), p.SampleRate, h.SampleCount(), p.Channels, tc.len, tc.rate, tc.samples, tc.channels)
		}
	}
}

// FuzzParse: no input panics, and a header Parse accepts has a size that holds it.
func FuzzParse(f *testing.F) {
	f.Add([]byte{0xff, 0xfb, 0x90, 0x00, 0})
	f.Add([]byte{0xff, 0xf3, 0x80, 0x40, 0})
	f.Add([]byte{0xff, 0xfd, 0x90, 0x00, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Parse(b)
		if err != nil {
			return
		}
		if n := h.Len(); n < 4 {
			t.Fatalf("% x: frame of %d bytes", b, n)
		}
		if p := h.Params(); p.SampleRate <= 0 || p.Channels < 1 || p.Channels > 2 {
			t.Fatalf("% x: params %+v", b, p)
		}
	})
}
