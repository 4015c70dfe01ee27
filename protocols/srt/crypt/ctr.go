package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// keystreamBlocks is how many AES blocks of key stream are made before they are XORed into the
// payload in one pass: 1 KiB of scratch per key, a 1316-byte payload in two passes.
const keystreamBlocks = 64

// sek is one stream encrypting key with its salt and the scratch space its CTR loop works in,
// so that encrypting a packet allocates nothing. Not safe for concurrent use.
type sek struct {
	key   [32]byte // the SEK; key[:n] is in use
	n     int
	salt  [SaltLen]byte
	block cipher.Block
	ctr   [aes.BlockSize]byte
	ks    [keystreamBlocks * aes.BlockSize]byte
}

func newSEK(key, salt []byte) (*sek, error) {
	if err := checkKeyLen(len(key)); err != nil {
		return nil, err
	}
	if len(salt) != SaltLen {
		return nil, fmt.Errorf("%w: salt of %d bytes, want %d", ErrInvalidKM, len(salt), SaltLen)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("srt crypt: sek: %w", err)
	}
	k := &sek{n: len(key), block: block}
	copy(k.key[:], key)
	copy(k.salt[:], salt)
	return k, nil
}

// wipe clears the key bytes of a retired SEK.
func (k *sek) wipe() {
	clear(k.key[:])
	clear(k.ks[:])
}

// xor encrypts or decrypts p in place for packet sequence number seq with AES-CTR as SRT
// specifies (draft-sharabayko-srt §6.1.2, libsrt hcrypt_SetCtrIV): the 128-bit initial counter
// is 0^80 | seq (32 bits, big-endian) | 0^16 (the block counter), whose upper 112 bits are
// XORed with the first 112 bits of the salt; each following block increments the counter.
func (k *sek) xor(seq uint32, p []byte) {
	copy(k.ctr[:14], k.salt[:14])
	k.ctr[10] ^= byte(seq >> 24)
	k.ctr[11] ^= byte(seq >> 16)
	k.ctr[12] ^= byte(seq >> 8)
	k.ctr[13] ^= byte(seq)
	k.ctr[14], k.ctr[15] = 0, 0
	// The counter increments as a 128-bit big-endian number; a payload would need 2^64 blocks
	// to carry out of the low half, so the low 64 bits are enough.
	lo := binary.BigEndian.Uint64(k.ctr[8:])
	var blk uint64
	for off := 0; off < len(p); {
		n := min(len(p)-off, len(k.ks))
		for b := 0; b < n; b += aes.BlockSize {
			binary.BigEndian.PutUint64(k.ctr[8:], lo+blk)
			k.block.Encrypt(k.ks[b:b+aes.BlockSize], k.ctr[:])
			blk++
		}
		subtle.XORBytes(p[off:off+n], p[off:off+n], k.ks[:n])
		off += n
	}
}
