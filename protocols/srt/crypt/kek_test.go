package crypt

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// RFC 6070 §2: PBKDF2-HMAC-SHA1 test vectors (the 16777216-iteration one is left out for time).
func TestPBKDF2RFC6070(t *testing.T) {
	for _, tc := range []struct {
		pass, salt string
		iter, n    int
		want       string
	}{
		{"password", "salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"},
		{"password", "salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"},
		{"password", "salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"},
		{"passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25, "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"},
		{"pass\x00word", "sa\x00lt", 4096, 16, "56fa6aa75548099dcc37d7f03425e0c3"},
	} {
		got, err := pbkdf2SHA1(tc.pass, []byte(tc.salt), tc.iter, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got) != tc.want {
			t.Errorf("PBKDF2(%q, %q, %d, %d) = %x, want %s", tc.pass, tc.salt, tc.iter, tc.n, got, tc.want)
		}
	}
}

// The KEK depends on the last 8 bytes of the salt only (LSB(64, Salt)) and on the key length.
func TestDeriveKEKSaltTail(t *testing.T) {
	const pass = "sluice-crypt-test"
	salt := []byte("0123456789abcdef")
	wrapWith := func(k *kek) string {
		w, err := wrapKey(nil, k.block, make([]byte, 16))
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(w)
	}
	base, err := deriveKEK(pass, salt, 16)
	if err != nil {
		t.Fatal(err)
	}
	head := append([]byte("XXXXXXXX"), salt[8:]...)
	sameTail, err := deriveKEK(pass, head, 16)
	if err != nil {
		t.Fatal(err)
	}
	if wrapWith(base) != wrapWith(sameTail) {
		t.Error("changing the first 8 bytes of the salt changed the KEK")
	}
	tail := append(append([]byte(nil), salt[:8]...), "YYYYYYYY"...)
	otherTail, err := deriveKEK(pass, tail, 16)
	if err != nil {
		t.Fatal(err)
	}
	if wrapWith(base) == wrapWith(otherTail) {
		t.Error("changing the last 8 bytes of the salt left the KEK as it was")
	}
	// The KEK is PBKDF2 of exactly those 8 bytes, 2048 iterations, the key length.
	want, err := pbkdf2SHA1(pass, salt[8:], 2048, 16)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newSEK(want, salt) // any AES block with that key
	if err != nil {
		t.Fatal(err)
	}
	if wrapWith(base) != wrapWith(&kek{block: ref.block}) {
		t.Error("the KEK is not PBKDF2-HMAC-SHA1(passphrase, salt[8:16], 2048, 16)")
	}
	if _, err := deriveKEK(pass, salt[:15], 16); !errors.Is(err, ErrInvalidKM) {
		t.Errorf("15-byte salt: %v, want ErrInvalidKM", err)
	}
}

func TestCheckPassphrase(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want error
	}{
		{"", ErrNoPassphrase},
		{"123456789", ErrPassphraseLength},
		{"1234567890", nil},
		{strings.Repeat("x", 80), nil},
		{strings.Repeat("x", 81), ErrPassphraseLength},
	} {
		if err := CheckPassphrase(tc.p); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckPassphrase(%d bytes) = %v, want %v", len(tc.p), err, tc.want)
		}
	}
}
