package nal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// TestAppendAVCConfig: the record holds the SPS and PPS with 4-byte lengths, and for every
// profile but 66, 77 and 88 the extension with the SPS's chroma format and bit depths (libx264's
// parameter sets for 320x240); a missing SPS or PPS is an error.
func TestAppendAVCConfig(t *testing.T) {
	pps := []byte{0x68, 0xeb, 0xe3, 0xcb, 0x22, 0xc0}
	for _, c := range []struct {
		name, sps string
		ext       []byte
	}{
		{"Baseline", "6742c00dd9414fc0", nil},
		{"High", "6764000dacd94141fb011000000300100000030320f1429960", []byte{0xfd, 0xf8, 0xf8, 0}},
		{"High 10", "676e000da6cd94141fb011000003000100000300320f142996", []byte{0xfd, 0xfa, 0xfa, 0}},
		{"High 4:2:2", "677a000dbcd94141fb011000000300100000030320f1429960", []byte{0xfe, 0xf8, 0xf8, 0}},
		{"High 4:4:4", "67f4000d919b28283f6022000003000200000300641e28532c", []byte{0xff, 0xf8, 0xf8, 0}},
	} {
		sps, _ := hex.DecodeString(c.sps)
		b, err := AppendAVCConfig([]byte{9}, sps, pps)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := append([]byte{9, 1, sps[1], sps[2], sps[3], 0xff, 0xe1, 0, byte(len(sps))}, sps...)
		want = append(append(want, 1, 0, byte(len(pps))), pps...)
		if want = append(want, c.ext...); !bytes.Equal(b, want) {
			t.Errorf("%s: % x\nwant % x", c.name, b, want)
		}
	}
	if _, err := AppendAVCConfig(nil, []byte{0x67, 0x64}, pps); !errors.Is(err, ErrAVCConfig) {
		t.Errorf("a short SPS: %v", err)
	}
	if _, err := AppendAVCConfig(nil, []byte{0x67, 0x64, 0, 0x0d}, nil); !errors.Is(err, ErrAVCConfig) {
		t.Errorf("no PPS: %v", err)
	}
}
