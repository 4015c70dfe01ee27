package crypt

import (
	"fmt"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// BenchmarkEncrypt and BenchmarkDecrypt measure the per-packet path on 1316-byte payloads
// (7 TS packets): 0 allocs/op, MB/s from SetBytes.
func BenchmarkEncrypt(b *testing.B) {
	benchPackets(b, func(b *testing.B, s *Sender, _ *Receiver, seq uint32, p []byte) {
		s.Encrypt(seq, p)
	})
}

func BenchmarkDecrypt(b *testing.B) {
	benchPackets(b, func(b *testing.B, _ *Sender, r *Receiver, seq uint32, p []byte) {
		if err := r.Decrypt(wire.KeyEven, seq, p); err != nil {
			b.Fatal(err)
		}
	})
}

// benchPackets runs op on one 1316-byte payload per iteration, with consecutive sequence
// numbers, for each key length.
func benchPackets(b *testing.B, op func(b *testing.B, s *Sender, r *Receiver, seq uint32, p []byte)) {
	for _, keyLen := range []int{16, 24, 32} {
		b.Run(fmt.Sprintf("AES-%d", keyLen*8), func(b *testing.B) {
			s, r := newPair(b, keyLen)
			p := make([]byte, 1316)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			seq := uint32(0)
			for b.Loop() {
				op(b, s, r, seq, p)
				seq = (seq + 1) & 0x7FFFFFFF
			}
		})
	}
}

// BenchmarkNewReceiver is the cost of opening a KM: PBKDF2 (2048 iterations) and the unwrap.
func BenchmarkNewReceiver(b *testing.B) {
	s, err := NewSender(testPass, 16, Refresh{})
	if err != nil {
		b.Fatal(err)
	}
	km := s.KM(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewReceiver(testPass, km); err != nil {
			b.Fatal(err)
		}
	}
}
