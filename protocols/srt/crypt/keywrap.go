package crypt

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// wrapIV is RFC 3394's default initial value (§2.2.3.1): unwrapping with the wrong KEK does not
// give it back, which is how a wrong passphrase shows.
var wrapIV = [8]byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6}

// wrapKey wraps plain (a multiple of 8 bytes, at least 16) with kek as RFC 3394 §2.2.1 describes
// (the index-based form) and appends the len(plain)+8 bytes of the result to dst.
func wrapKey(dst []byte, kek cipher.Block, plain []byte) ([]byte, error) {
	n := len(plain) / 8
	if len(plain)%8 != 0 || n < 2 {
		return dst, fmt.Errorf("srt crypt: key wrap of %d bytes, want a multiple of 8 of at least 16", len(plain))
	}
	start := len(dst)
	dst = append(dst, wrapIV[:]...)
	dst = append(dst, plain...)
	out := dst[start:]
	var blk [16]byte
	for j := range 6 {
		for i := 1; i <= n; i++ {
			// B = AES(K, A | R[i]); A = MSB(64, B) ^ t; R[i] = LSB(64, B), with t = n*j + i.
			copy(blk[:8], out[:8])
			copy(blk[8:], out[i*8:i*8+8])
			kek.Encrypt(blk[:], blk[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(out[:8], binary.BigEndian.Uint64(blk[:8])^t)
			copy(out[i*8:i*8+8], blk[8:])
		}
	}
	return dst, nil
}

// unwrapKey unwraps wrapped (the 8-byte integrity value then the wrapped key data) with kek as
// RFC 3394 §2.2.2 describes and appends the len(wrapped)-8 bytes of key data to dst. A wrong kek
// fails the integrity check: ErrBadPassphrase.
func unwrapKey(dst []byte, kek cipher.Block, wrapped []byte) ([]byte, error) {
	n := len(wrapped)/8 - 1
	if len(wrapped)%8 != 0 || n < 2 {
		return dst, fmt.Errorf("%w: wrapped key of %d bytes, want a multiple of 8 of at least 24", ErrInvalidKM, len(wrapped))
	}
	var a [8]byte
	copy(a[:], wrapped[:8])
	start := len(dst)
	dst = append(dst, wrapped[8:]...)
	r := dst[start:]
	var blk [16]byte
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			// B = AES-1(K, (A ^ t) | R[i]); A = MSB(64, B); R[i] = LSB(64, B), with t = n*j + i.
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(a[:])^t)
			copy(blk[8:], r[(i-1)*8:i*8])
			kek.Decrypt(blk[:], blk[:])
			copy(a[:], blk[:8])
			copy(r[(i-1)*8:i*8], blk[8:])
		}
	}
	if subtle.ConstantTimeCompare(a[:], wrapIV[:]) != 1 {
		clear(r)
		return dst[:start], ErrBadPassphrase
	}
	return dst, nil
}
