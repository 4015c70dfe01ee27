package nal

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// H.264 and H.265 units for the fixer's tests: the first bytes say their kind.
var (
	avcSPS   = []byte{0x67, 0x64, 0x00, 0x1f}
	avcSPS2  = []byte{0x67, 0x64, 0x00, 0x28}
	avcPPS   = []byte{0x68, 0xeb, 0xe3}
	avcAUD   = []byte{0x09, 0xf0}
	avcSEI   = []byte{0x06, 0x05, 0x01}
	avcIDR   = []byte{0x65, 0x88, 0x84}
	avcSlice = []byte{0x41, 0x9a, 0x02}
	hevcVPS  = []byte{32 << 1, 1, 0x0c}
	hevcSPS  = []byte{33 << 1, 1, 0x01}
	hevcPPS  = []byte{34 << 1, 1, 0xc1}
	hevcAUD  = []byte{35 << 1, 1, 0x50}
	hevcIDR  = []byte{19 << 1, 1, 0xaf}
	hevcTail = []byte{1 << 1, 1, 0xd0}
)

func TestFixer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		codec   media.Codec
		known   [3][]byte // VPS, SPS, PPS given out of band
		in      [][]byte
		want    [][]byte
		key     bool
		changed bool
	}{
		{"AUD and empty units dropped", media.CodecH264, [3][]byte{nil, avcSPS, avcPPS},
			[][]byte{avcAUD, avcSEI, {}, avcSlice}, [][]byte{avcSEI, avcSlice}, false, false},
		{"key frame without parameter sets gets them", media.CodecH264, [3][]byte{nil, avcSPS, avcPPS},
			[][]byte{avcAUD, avcSEI, avcIDR}, [][]byte{avcSPS, avcPPS, avcSEI, avcIDR}, true, false},
		{"key frame with its own left as it is", media.CodecH264, [3][]byte{nil, avcSPS, avcPPS},
			[][]byte{avcSPS, avcPPS, avcIDR}, [][]byte{avcSPS, avcPPS, avcIDR}, true, false},
		{"key frame with a new SPS only: it is learned, both in decoding order", media.CodecH264, [3][]byte{nil, avcSPS, avcPPS},
			[][]byte{avcSEI, avcSPS2, avcIDR}, [][]byte{avcSPS2, avcPPS, avcSEI, avcIDR}, true, true},
		{"key frame before any parameter set: left as it is, not a key frame a decoder can start on", media.CodecH264, [3][]byte{},
			[][]byte{avcIDR}, [][]byte{avcIDR}, false, false},
		{"in-band parameter sets learned", media.CodecH264, [3][]byte{},
			[][]byte{avcSPS, avcPPS, avcIDR}, [][]byte{avcSPS, avcPPS, avcIDR}, true, true},
		{"H.265 key frame gets VPS, SPS, PPS", media.CodecH265, [3][]byte{hevcVPS, hevcSPS, hevcPPS},
			[][]byte{hevcAUD, hevcIDR}, [][]byte{hevcVPS, hevcSPS, hevcPPS, hevcIDR}, true, false},
		{"H.265 one-byte unit dropped", media.CodecH265, [3][]byte{hevcVPS, hevcSPS, hevcPPS},
			[][]byte{{2}, hevcTail}, [][]byte{hevcTail}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFixer(tc.codec, tc.known[0], tc.known[1], tc.known[2])
			in := slices.Clone(tc.in)
			out, key, changed := f.Fix(in)
			if !slices.EqualFunc(out, tc.want, bytes.Equal) || key != tc.key || changed != tc.changed {
				t.Errorf("got %x key %v changed %v, want %x key %v changed %v", out, key, changed, tc.want, tc.key, tc.changed)
			}
			if !slices.EqualFunc(in, tc.in, bytes.Equal) {
				t.Error("the input was modified")
			}
		})
	}
}

// TestFixerKey: a key frame is reported as one only when a decoder can start on it: its
// parameter sets known (carried, or learned before); a slice never is.
func TestFixerKey(t *testing.T) {
	f := NewFixer(media.CodecH264, nil, nil, nil)
	key := func(nalus ...[]byte) bool {
		_, k, _ := f.Fix(nalus)
		return k
	}
	if key(avcSlice) {
		t.Error("a slice reported as a key frame")
	}
	if key(avcIDR) {
		t.Error("a key frame without parameter sets known reported as one")
	}
	if !key(avcSPS, avcPPS, avcIDR) {
		t.Error("a key frame with its parameter sets not reported as one")
	}
	if key(avcSlice) {
		t.Error("a slice after the key frame reported as a key frame")
	}
	if !key(avcIDR) {
		t.Error("a key frame, parameter sets known from before, not reported as one")
	}
	if p := f.Params(); !bytes.Equal(p.SPS, avcSPS) || !bytes.Equal(p.PPS, avcPPS) {
		t.Errorf("params %+v", p)
	}
}

// TestFixerKeepsCopies: the parameter sets learned do not alias the bytes they came in.
func TestFixerKeepsCopies(t *testing.T) {
	sps, pps := slices.Clone(avcSPS), slices.Clone(avcPPS)
	f := NewFixer(media.CodecH264, nil, nil, nil)
	f.Fix([][]byte{sps, pps, avcIDR})
	sps[3], pps[2] = 0, 0
	if p := f.Params(); !bytes.Equal(p.SPS, avcSPS) || !bytes.Equal(p.PPS, avcPPS) {
		t.Errorf("learned parameter sets changed with the buffer they came in: %x %x", p.SPS, p.PPS)
	}
}

func TestPack(t *testing.T) {
	a, b := []byte{1, 2, 3}, []byte{4, 5}
	out := Pack([][]byte{a, b, {}})
	a[0], b[0] = 9, 9
	if len(out) != 3 || !bytes.Equal(out[0], []byte{1, 2, 3}) || !bytes.Equal(out[1], []byte{4, 5}) || len(out[2]) != 0 {
		t.Fatalf("Pack: %x", out)
	}
	if cap(out[0]) != 3 {
		t.Errorf("a packed unit can grow into the next: cap %d", cap(out[0]))
	}
}

// FuzzFixer: any NAL units (split from the fuzzer's bytes at 0x00 0x00 0x01) never panic the
// fixer; what it returns never holds an AUD or an empty unit, and a key frame's units start
// with the parameter sets once they are known.
func FuzzFixer(f *testing.F) {
	join := func(units ...[]byte) []byte { return bytes.Join(units, []byte{0, 0, 1}) }
	f.Add(false, join(avcSPS, avcPPS, avcIDR))
	f.Add(false, join(avcAUD, avcSEI, avcSlice))
	f.Add(true, join(hevcVPS, hevcSPS, hevcPPS, hevcIDR))
	f.Add(true, join(hevcAUD, []byte{2}, hevcTail))
	f.Add(false, join(avcSPS, avcPPS, avcIDR, []byte{0xff, 0xff}, avcSlice, []byte{0xff, 0xff}, avcIDR))
	// An open GOP's start: a recovery point SEI of zero frames, an I slice (x264's bytes).
	f.Add(false, join(avcSPS, avcPPS, avcIDR, []byte{0xff, 0xff}, []byte{0x06, 0x06, 0x01, 0xc4, 0x80}, []byte{0x01, 0x88, 0x84, 0x00}))
	f.Fuzz(func(t *testing.T, h265 bool, data []byte) {
		codec := media.CodecH264
		if h265 {
			codec = media.CodecH265
		}
		fx := NewFixer(codec, nil, nil, nil)
		for _, au := range bytes.Split(data, []byte{0xff, 0xff}) {
			nalus := bytes.Split(au, []byte{0, 0, 1})
			out, key, _ := fx.Fix(nalus)
			for _, n := range out {
				if len(n) == 0 || Classify(codec, n) == AUD {
					t.Fatalf("out holds %x", n)
				}
			}
			carries := slices.ContainsFunc(nalus, func(n []byte) bool {
				k := Classify(codec, n)
				return k == VPS || k == SPS || k == PPS
			})
			if key && !carries && fx.Ready() && Classify(codec, out[0]) != SPS && Classify(codec, out[0]) != VPS {
				t.Fatalf("a key frame without parameter sets starts with %x, parameter sets known", out[0])
			}
		}
	})
}
