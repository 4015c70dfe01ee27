package crypt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

const testPass = "sluice-crypt-test" // also the passphrase of the captures under testdata

// isTS reports whether p is whole 188-byte TS packets, each starting with the sync byte.
func isTS(p []byte) bool {
	if len(p) == 0 || len(p)%188 != 0 {
		return false
	}
	for i := 0; i < len(p); i += 188 {
		if p[i] != 0x47 {
			return false
		}
	}
	return true
}

func TestRoundTripKeyLengths(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{2})
	for _, keyLen := range []int{16, 24, 32} {
		s, err := NewSender(testPass, keyLen, Refresh{})
		if err != nil {
			t.Fatal(err)
		}
		km := s.KM(nil)
		k, err := ParseKM(km)
		if err != nil {
			t.Fatal(err)
		}
		if k.KeyLen != keyLen || k.Keys != wire.KeyEven || len(km) != KMHeaderLen+SaltLen+WrapICVLen+keyLen {
			t.Fatalf("key %d: KM of %d bytes announces %v keys of %d", keyLen, len(km), k.Keys, k.KeyLen)
		}
		r, err := NewReceiver(testPass, km)
		if err != nil {
			t.Fatal(err)
		}
		if r.KeyLen() != keyLen || !r.Has(wire.KeyEven) || r.Has(wire.KeyOdd) {
			t.Fatalf("key %d: receiver has length %d, even %v, odd %v", keyLen, r.KeyLen(), r.Has(wire.KeyEven), r.Has(wire.KeyOdd))
		}
		for i := range 50 {
			seq := uint32(0x7FFFFFF0+i) & 0x7FFFFFFF // across the 31-bit wrap
			plain := make([]byte, 1+i*37)
			_, _ = rng.Read(plain)
			p := bytes.Clone(plain)
			kk, announce := s.Encrypt(seq, p)
			if kk != wire.KeyEven || announce {
				t.Fatalf("packet %d: KK %v, announce %v", i, kk, announce)
			}
			if bytes.Equal(p, plain) && len(p) > 8 {
				t.Fatalf("packet %d: ciphertext equals plaintext", i)
			}
			if err := r.Decrypt(kk, seq, p); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p, plain) {
				t.Fatalf("key %d packet %d (seq %#x): decrypted payload differs", keyLen, i, seq)
			}
		}
	}
}

func TestWrongPassphrase(t *testing.T) {
	for _, keyLen := range []int{16, 24, 32} {
		s, err := NewSender(testPass, keyLen, Refresh{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewReceiver("another-passphrase", s.KM(nil)); !errors.Is(err, ErrBadPassphrase) {
			t.Errorf("key %d, wrong passphrase: %v, want ErrBadPassphrase", keyLen, err)
		}
		if _, err := SenderFromKM("another-passphrase", s.KM(nil), Refresh{}); !errors.Is(err, ErrBadPassphrase) {
			t.Errorf("key %d, SenderFromKM with the wrong passphrase: %v, want ErrBadPassphrase", keyLen, err)
		}
		if _, err := NewReceiver("", s.KM(nil)); !errors.Is(err, ErrNoPassphrase) {
			t.Errorf("key %d, no passphrase: %v, want ErrNoPassphrase", keyLen, err)
		}
	}
}

// newPair returns a sender of keyLen-byte keys under testPass and a receiver of its KM.
func newPair(tb testing.TB, keyLen int) (*Sender, *Receiver) {
	tb.Helper()
	s, err := NewSender(testPass, keyLen, Refresh{})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := NewReceiver(testPass, s.KM(nil))
	if err != nil {
		tb.Fatal(err)
	}
	return s, r
}

func TestDecryptKeyNotHeld(t *testing.T) {
	_, r := newPair(t, 16)
	p := []byte("plain payload")
	for _, tc := range []struct {
		kk   wire.KeyIndex
		want error
	}{{wire.KeyOdd, ErrUnknownKey}, {wire.KeyNone, ErrNotEncrypted}, {wire.KeyBoth, ErrUnknownKey}, {wire.KeyIndex(9), ErrUnknownKey}} {
		if err := r.Decrypt(tc.kk, 1, p); !errors.Is(err, tc.want) {
			t.Errorf("Decrypt with KK %v: %v, want %v", tc.kk, err, tc.want)
		}
		if string(p) != "plain payload" {
			t.Fatalf("Decrypt with KK %v changed the payload", tc.kk)
		}
	}
}

func TestUpdateRefusalsLeaveReceiver(t *testing.T) {
	s, r := newPair(t, 16)
	other, err := NewSender("another-passphrase", 16, Refresh{})
	if err != nil {
		t.Fatal(err)
	}
	longer, err := NewSender(testPass, 32, Refresh{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		km   []byte
		want error
	}{
		{"other passphrase", other.KM(nil), ErrBadPassphrase},
		{"other key length", longer.KM(nil), ErrInvalidKM},
		{"truncated", s.KM(nil)[:30], ErrInvalidKM},
		{"GCM", with(s.KM(nil), 8, CipherAESGCM), ErrUnsupportedCipher},
	} {
		if err := r.Update(tc.km); !errors.Is(err, tc.want) {
			t.Errorf("Update with %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	plain := []byte("still the same key after refused updates")
	p := bytes.Clone(plain)
	kk, _ := s.Encrypt(7, p)
	if err := r.Decrypt(kk, 7, p); err != nil || !bytes.Equal(p, plain) || r.KeyLen() != 16 {
		t.Fatalf("after refused updates: %v, %q, key length %d", err, p, r.KeyLen())
	}
}

// SenderFromKM re-wraps the same key with the same KEK: its KM is the one it was made from, and
// what it encrypts, the peer's Receiver (made from that KM too) decrypts.
func TestSenderFromKM(t *testing.T) {
	for _, keyLen := range []int{16, 24, 32} {
		caller, err := NewSender(testPass, keyLen, Refresh{})
		if err != nil {
			t.Fatal(err)
		}
		km := caller.KM(nil)
		listener, err := SenderFromKM(testPass, km, Refresh{})
		if err != nil {
			t.Fatal(err)
		}
		if got := listener.KM(nil); !bytes.Equal(got, km) {
			t.Errorf("key %d: SenderFromKM(km).KM() = % x, want % x", keyLen, got, km)
		}
		callerRecv, err := NewReceiver(testPass, km) // the caller's receiver, cloned from its sender's KM
		if err != nil {
			t.Fatal(err)
		}
		plain := []byte("from the listener to the caller")
		p := bytes.Clone(plain)
		kk, _ := listener.Encrypt(99, p)
		if err := callerRecv.Decrypt(kk, 99, p); err != nil || !bytes.Equal(p, plain) {
			t.Fatalf("key %d: %v, %q", keyLen, err, p)
		}
	}
	// A KM with the odd key only: the Sender starts with it.
	caller, err := NewSender(testPass, 16, Refresh{Rate: 4, PreAnnounce: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		caller.Encrypt(uint32(i), make([]byte, 10))
	}
	oddOnly := caller.KM(nil)
	if k, err := ParseKM(oddOnly); err != nil || k.Keys != wire.KeyOdd {
		t.Fatalf("KM after one full refresh: %v, %v", k.Keys, err)
	}
	s, err := SenderFromKM(testPass, oddOnly, Refresh{})
	if err != nil {
		t.Fatal(err)
	}
	if kk, _ := s.Encrypt(1, make([]byte, 10)); kk != wire.KeyOdd {
		t.Errorf("SenderFromKM of an odd-key KM encrypts with %v", kk)
	}
}
