package crypt

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 3394 §4: the six test vectors (128-, 192- and 256-bit KEKs).
func TestKeyWrapRFC3394(t *testing.T) {
	const (
		kek128 = "000102030405060708090A0B0C0D0E0F"
		kek192 = "000102030405060708090A0B0C0D0E0F1011121314151617"
		kek256 = "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
		data16 = "00112233445566778899AABBCCDDEEFF"
		data24 = "00112233445566778899AABBCCDDEEFF0001020304050607"
		data32 = "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F"
	)
	for _, tc := range []struct{ name, kek, data, want string }{
		{"4.1", kek128, data16, "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
		{"4.2", kek192, data16, "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
		{"4.3", kek256, data16, "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
		{"4.4", kek192, data24, "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
		{"4.5", kek256, data24, "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
		{"4.6", kek256, data32, "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
	} {
		block, err := aes.NewCipher(unhex(t, tc.kek))
		if err != nil {
			t.Fatal(err)
		}
		data, want := unhex(t, tc.data), unhex(t, tc.want)
		got, err := wrapKey([]byte("prefix"), block, data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
			t.Errorf("RFC 3394 %s: wrap = %X, want %X", tc.name, got[6:], want)
		}
		plain, err := unwrapKey(nil, block, want)
		if err != nil {
			t.Fatalf("RFC 3394 %s: unwrap: %v", tc.name, err)
		}
		if !bytes.Equal(plain, data) {
			t.Errorf("RFC 3394 %s: unwrap = %X, want %X", tc.name, plain, data)
		}
		// One flipped bit anywhere fails the integrity check.
		for i := range want {
			bad := bytes.Clone(want)
			bad[i] ^= 0x10
			if _, err := unwrapKey(nil, block, bad); !errors.Is(err, ErrBadPassphrase) {
				t.Fatalf("RFC 3394 %s: byte %d flipped: %v, want ErrBadPassphrase", tc.name, i, err)
			}
		}
	}
}

func TestKeyWrapLengths(t *testing.T) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 8, 12, 17} {
		if _, err := wrapKey(nil, block, make([]byte, n)); err == nil {
			t.Errorf("wrap of %d bytes: no error", n)
		}
	}
	for _, n := range []int{0, 8, 16, 23, 25} {
		if _, err := unwrapKey(nil, block, make([]byte, n)); !errors.Is(err, ErrInvalidKM) {
			t.Errorf("unwrap of %d bytes: %v, want ErrInvalidKM", n, err)
		}
	}
}
