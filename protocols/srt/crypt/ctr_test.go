package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// The CTR loop against the standard library's CTR mode started at the counter block SRT
// specifies: IV = (salt[0:14] XOR (0^10 | seq)) | 0^16.
func TestCTRMatchesStdlib(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{1})
	for _, keyLen := range []int{16, 24, 32} {
		key, salt := make([]byte, keyLen), make([]byte, SaltLen)
		for _, seq := range []uint32{0, 1, 0x12345678, 0x7FFFFFFF} {
			for _, n := range []int{0, 1, 15, 16, 17, 188, 1024, 1025, 1316, 1456, 3000} {
				_, _ = rng.Read(key)
				_, _ = rng.Read(salt)
				k, err := newSEK(key, salt)
				if err != nil {
					t.Fatal(err)
				}
				iv := make([]byte, aes.BlockSize)
				copy(iv, salt[:14])
				iv[10] ^= byte(seq >> 24)
				iv[11] ^= byte(seq >> 16)
				iv[12] ^= byte(seq >> 8)
				iv[13] ^= byte(seq)
				block, err := aes.NewCipher(key)
				if err != nil {
					t.Fatal(err)
				}
				plain := make([]byte, n)
				_, _ = rng.Read(plain)
				want := make([]byte, n)
				cipher.NewCTR(block, iv).XORKeyStream(want, plain)
				got := bytes.Clone(plain)
				k.xor(seq, got)
				if !bytes.Equal(got, want) {
					t.Fatalf("key %d, seq %#x, %d bytes: differs from AES-CTR at the SRT IV", keyLen, seq, n)
				}
				k.xor(seq, got)
				if !bytes.Equal(got, plain) {
					t.Fatalf("key %d, seq %#x, %d bytes: decrypting did not give the plaintext back", keyLen, seq, n)
				}
			}
		}
	}
}

func TestEncryptDecryptAllocateNothing(t *testing.T) {
	s, err := NewSender("sluice-crypt-test", 16, Refresh{Rate: 50, PreAnnounce: 10})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReceiver("sluice-crypt-test", s.KM(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 1316)
	seq := uint32(0)
	// The steady path: no refresh within the runs.
	if a := testing.AllocsPerRun(20, func() { s.Encrypt(seq, p); seq++ }); a != 0 {
		t.Errorf("Encrypt: %v allocations per packet", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = r.Decrypt(wire.KeyEven, seq, p) }); a != 0 {
		t.Errorf("Decrypt: %v allocations per packet", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = r.Decrypt(wire.KeyOdd, seq, p) }); a != 0 {
		t.Errorf("Decrypt with a key not held: %v allocations per packet", a)
	}
}
