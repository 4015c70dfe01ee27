package crypt

import (
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// FuzzNewReceiver feeds arbitrary KM bytes to NewReceiver and Update with a fixed passphrase:
// an error or a working Receiver, never a panic.
func FuzzNewReceiver(f *testing.F) {
	for _, km := range captureKMs(f) {
		f.Add(km)
	}
	for _, tc := range kmCases {
		f.Add(tc.b)
	}
	for _, keyLen := range []int{16, 24, 32} {
		s, err := NewSender(testPass, keyLen, Refresh{Rate: 5, PreAnnounce: 2})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.KM(nil))
		for i := range 4 {
			if _, announce := s.Encrypt(uint32(i), make([]byte, 4)); announce {
				f.Add(s.KM(nil)) // both keys
			}
		}
	}
	f.Fuzz(func(t *testing.T, km []byte) {
		r, err := NewReceiver(testPass, km)
		if err != nil {
			if !errors.Is(err, ErrInvalidKM) && !errors.Is(err, ErrUnsupportedCipher) && !errors.Is(err, ErrBadPassphrase) {
				t.Fatalf("error %v is none of ErrInvalidKM, ErrUnsupportedCipher, ErrBadPassphrase", err)
			}
			return
		}
		if n := r.KeyLen(); n != 16 && n != 24 && n != 32 {
			t.Fatalf("key length %d", n)
		}
		p := make([]byte, 1316)
		held := 0
		for _, kk := range []wire.KeyIndex{wire.KeyEven, wire.KeyOdd} {
			if r.Has(kk) {
				held++
				if err := r.Decrypt(kk, 12345, p); err != nil {
					t.Fatalf("Decrypt with a held %v key: %v", kk, err)
				}
			}
		}
		if held == 0 {
			t.Fatal("a Receiver without keys")
		}
		// The same KM again as a refresh is accepted.
		if err := r.Update(km); err != nil {
			t.Fatalf("Update with the KM that made the Receiver: %v", err)
		}
	})
}
