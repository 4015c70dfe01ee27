package nal

import (
	"bytes"
	"os/exec"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestOpenGOPKeyFrames: x264's open GOPs (B-frames before the next GOP's I-picture referring to
// it) start with non-IDR I-pictures that carry a recovery point SEI of zero frames: key frames
// every 50 frames, not only the first IDR. x264's periodic intra refresh also sends recovery
// points, on P-pictures and of more frames: only the first picture is key there.
func TestOpenGOPKeyFrames(t *testing.T) {
	testutil.RequireFFmpeg(t)
	for _, c := range []struct {
		name, params string
		want         []int
	}{
		// The I-picture comes one before its place in decode order: the B-frames shown
		// before it are decoded after it.
		{"open GOP", "open-gop=1:keyint=50:min-keyint=50:scenecut=0", []int{0, 49, 99}},
		{"closed GOP", "keyint=50:min-keyint=50:scenecut=0", []int{0, 50, 100}},
		{"intra refresh", "intra-refresh=1:keyint=50", []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "6",
				"-c:v", "libx264", "-preset", "ultrafast", "-bf", "3", "-x264-params", c.params,
				"-bsf:v", "h264_metadata=aud=insert", "-f", "h264", "-").Output()
			if err != nil {
				t.Fatal(err)
			}
			f := NewFixer(media.CodecH264, nil, nil, nil)
			var keys []int
			for i, au := range accessUnits(out) {
				if _, key, _ := f.Fix(au); key {
					keys = append(keys, i)
				}
			}
			if !slices.Equal(keys, c.want) {
				t.Fatalf("key frames at %v (decode order), want %v", keys, c.want)
			}
		})
	}
}

// accessUnits splits an Annex B stream whose access units begin with an AUD into the NAL units
// of each.
func accessUnits(b []byte) [][][]byte {
	var aus [][][]byte
	for _, n := range bytes.Split(b, []byte{0, 0, 1}) {
		n = bytes.TrimRight(n, "\x00")
		if len(n) == 0 {
			continue
		}
		if Classify(media.CodecH264, n) == AUD || len(aus) == 0 {
			aus = append(aus, nil)
		}
		aus[len(aus)-1] = append(aus[len(aus)-1], n)
	}
	return aus
}

// TestH264Recovery: a recovery point of zero frames is found after other SEI messages and
// through emulation prevention bytes; one of more frames, a truncated unit or another unit type
// is not one.
func TestH264Recovery(t *testing.T) {
	for _, c := range []struct {
		name string
		n    []byte
		want bool
	}{
		{"x264's", []byte{0x06, 0x06, 0x01, 0xc4, 0x80}, true},
		{"after a picture timing", []byte{0x06, 0x01, 0x03, 0x00, 0x00, 0x03, 0x01, 0x06, 0x01, 0xc4, 0x80}, true},
		{"of two frames", []byte{0x06, 0x06, 0x01, 0x64, 0x80}, false},
		{"truncated", []byte{0x06, 0x06, 0x05, 0xc4}, false},
		{"a slice", []byte{0x01, 0x06, 0x01, 0xc4, 0x80}, false},
		{"empty", []byte{0x06}, false},
	} {
		if got := h264Recovery(c.n); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !h264IntraSlice([]byte{0x01, 0x88, 0x84}) || h264IntraSlice([]byte{0x01, 0x9a}) || h264IntraSlice([]byte{0x05, 0x88}) {
		t.Error("slice types misread")
	}
}

// TestFixOpenGOPAllocs: reading an open GOP's SEI and slices allocates nothing (every access
// unit of a stream goes through Fix); the unit carries its parameter sets, so that none are
// put in front.
func TestFixOpenGOPAllocs(t *testing.T) {
	f := NewFixer(media.CodecH264, nil, nil, nil)
	sps := []byte{0x67, 0x64, 0x00, 0x0d, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0x20, 0xf1, 0x42, 0x99, 0x60}
	pps := []byte{0x68, 0xeb, 0xe3, 0xcb, 0x22, 0xc0}
	f.SetParams(nil, sps, pps)
	au := [][]byte{sps, pps, {0x06, 0x01, 0x03, 0x00, 0x00, 0x03, 0x01, 0x06, 0x01, 0xc4, 0x80}, {0x41, 0x88, 0x84, 0x00, 0x10}}
	if _, key, _ := f.Fix(au); !key {
		t.Fatal("the open GOP's I-picture is not key")
	}
	if n := testing.AllocsPerRun(100, func() { f.Fix(au) }); n != 0 {
		t.Fatalf("%.1f allocations an access unit", n)
	}
}
