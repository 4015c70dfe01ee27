package crypt

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// validKM builds a well-formed KM: keyLen-byte keys, kk says which, arbitrary wrap bytes.
func validKM(kk wire.KeyIndex, keyLen int) []byte {
	n := 1
	if kk == wire.KeyBoth {
		n = 2
	}
	k := KM{Keys: kk, Cipher: CipherAESCTR, SE: SEMPEGTSSRT, KeyLen: keyLen,
		Salt: bytes.Repeat([]byte{0x5A}, SaltLen), Wrap: bytes.Repeat([]byte{0xC3}, WrapICVLen+n*keyLen)}
	return k.Append(nil)
}

func with(b []byte, i int, v byte) []byte {
	b = bytes.Clone(b)
	b[i] = v
	return b
}

// kmCases are the table cases of ParseKM, shared with FuzzParseKM as seeds.
var kmCases = []struct {
	name string
	b    []byte
	want error // nil, ErrInvalidKM or ErrUnsupportedCipher
}{
	{"even 128", validKM(wire.KeyEven, 16), nil},
	{"odd 192", validKM(wire.KeyOdd, 24), nil},
	{"both 256", validKM(wire.KeyBoth, 32), nil},
	{"both 128", validKM(wire.KeyBoth, 16), nil},
	{"empty", nil, ErrInvalidKM},
	{"header only", validKM(wire.KeyEven, 16)[:KMHeaderLen], ErrInvalidKM},
	{"one byte short", validKM(wire.KeyEven, 16)[:MinKMLen-1], ErrInvalidKM},
	{"one byte long", append(validKM(wire.KeyEven, 16), 0), ErrInvalidKM},
	{"both keys but one wrapped", with(validKM(wire.KeyEven, 16), 3, 3), ErrInvalidKM},
	{"S bit", with(validKM(wire.KeyEven, 16), 0, 0x92), ErrInvalidKM},
	{"version 2", with(validKM(wire.KeyEven, 16), 0, 0x22), ErrInvalidKM},
	{"media stream packet type", with(validKM(wire.KeyEven, 16), 0, 0x11), ErrInvalidKM},
	{"TS sync byte", with(validKM(wire.KeyEven, 16), 0, 0x47), ErrInvalidKM},
	{"signature", with(validKM(wire.KeyEven, 16), 2, 0x28), ErrInvalidKM},
	{"no key", with(validKM(wire.KeyEven, 16), 3, 0), ErrInvalidKM},
	{"KEKI 1", with(validKM(wire.KeyEven, 16), 7, 1), ErrInvalidKM},
	{"cipher none", with(validKM(wire.KeyEven, 16), 8, 0), ErrUnsupportedCipher},
	{"AES-ECB", with(validKM(wire.KeyEven, 16), 8, 1), ErrUnsupportedCipher},
	{"AES-GCM", with(with(validKM(wire.KeyEven, 16), 8, CipherAESGCM), 9, 1), ErrUnsupportedCipher},
	{"auth with CTR", with(validKM(wire.KeyEven, 16), 9, 1), ErrInvalidKM},
	{"SE MPEG-TS/UDP", with(validKM(wire.KeyEven, 16), 10, 1), ErrInvalidKM},
	{"salt 8", with(validKM(wire.KeyEven, 16), 14, 2), ErrInvalidKM},
	{"salt 0", with(validKM(wire.KeyEven, 16), 14, 0), ErrInvalidKM},
	{"salt 1020", with(validKM(wire.KeyEven, 16), 14, 255), ErrInvalidKM},
	{"key 20", with(validKM(wire.KeyEven, 16), 15, 5), ErrInvalidKM},
	{"key 0", with(validKM(wire.KeyEven, 16), 15, 0), ErrInvalidKM},
	{"key 1020", with(validKM(wire.KeyEven, 16), 15, 255), ErrInvalidKM},
	{"key 32 in a 16 message", with(validKM(wire.KeyEven, 16), 15, 8), ErrInvalidKM},
	{"reserved bits ignored", with(with(validKM(wire.KeyEven, 16), 3, 0xFD), 11, 0xFF), nil},
}

func TestParseKM(t *testing.T) {
	for _, tc := range kmCases {
		k, err := ParseKM(tc.b)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if k.Len() != len(tc.b) || len(k.Salt) != SaltLen || len(k.Wrap) != WrapICVLen+k.KeyCount()*k.KeyLen {
				t.Errorf("%s: lengths %d/%d/%d of %d bytes", tc.name, k.Len(), len(k.Salt), len(k.Wrap), len(tc.b))
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if errors.Is(err, ErrUnsupportedCipher) == errors.Is(err, ErrInvalidKM) {
			t.Errorf("%s: %v is both or neither of ErrInvalidKM and ErrUnsupportedCipher", tc.name, err)
		}
	}
}

func TestKMAppendRoundTrip(t *testing.T) {
	for _, kk := range []wire.KeyIndex{wire.KeyEven, wire.KeyOdd, wire.KeyBoth} {
		for _, n := range []int{16, 24, 32} {
			b := validKM(kk, n)
			k, err := ParseKM(b)
			if err != nil {
				t.Fatal(err)
			}
			if k.Keys != kk || k.KeyLen != n {
				t.Errorf("KK %v length %d parsed as %v/%d", kk, n, k.Keys, k.KeyLen)
			}
			if again := k.Append([]byte{9}); !bytes.Equal(again[1:], b) || again[0] != 9 {
				t.Errorf("KK %v length %d: Append(ParseKM(b)) differs from b", kk, n)
			}
		}
	}
}

// captureKMs returns the KM messages (not the KM state words) of every capture, for fuzz seeds.
func captureKMs(f *testing.F) [][]byte {
	names, err := filepath.Glob(filepath.Join("testdata", "*.pcap"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no captures under testdata: %v", err)
	}
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		dgs, err := readPcap(b)
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		for _, e := range srtEvents(f, dgs) {
			if e.km != nil {
				out = append(out, e.km)
			}
		}
	}
	return out
}

func FuzzParseKM(f *testing.F) {
	for _, tc := range kmCases {
		f.Add(tc.b)
	}
	for _, km := range captureKMs(f) {
		f.Add(km)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKM(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidKM) && !errors.Is(err, ErrUnsupportedCipher) {
				t.Fatalf("error %v is neither ErrInvalidKM nor ErrUnsupportedCipher", err)
			}
			return
		}
		if len(b) < MinKMLen || len(b) > MaxKMLen || k.Len() != len(b) {
			t.Fatalf("accepted %d bytes (Len %d), legal is %d..%d", len(b), k.Len(), MinKMLen, MaxKMLen)
		}
		again, err := ParseKM(k.Append(nil))
		if err != nil || again.Keys != k.Keys || again.KeyLen != k.KeyLen ||
			!bytes.Equal(again.Salt, k.Salt) || !bytes.Equal(again.Wrap, k.Wrap) {
			t.Fatalf("Append then ParseKM changed the message: %v", err)
		}
	})
}
