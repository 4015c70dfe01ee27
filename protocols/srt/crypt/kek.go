package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha1"
	"fmt"
)

const (
	// MinPassphraseLen is the shortest passphrase libsrt accepts (SRTO_PASSPHRASE), in bytes.
	MinPassphraseLen = 10
	// MaxPassphraseLen is the longest passphrase libsrt accepts (SRTO_PASSPHRASE), in bytes.
	MaxPassphraseLen = 80
	// PBKDF2Iterations is SRT's PBKDF2 iteration count for the key encrypting key.
	PBKDF2Iterations = 2048
	// pbkdf2SaltLen is how much of the KM salt feeds PBKDF2: its last (least significant) 64 bits.
	pbkdf2SaltLen = 8
)

// CheckPassphrase reports whether libsrt would accept p as a passphrase: "" (no encryption)
// is ErrNoPassphrase, a length outside MinPassphraseLen..MaxPassphraseLen is ErrPassphraseLength.
func CheckPassphrase(p string) error {
	if p == "" {
		return ErrNoPassphrase
	}
	if len(p) < MinPassphraseLen || len(p) > MaxPassphraseLen {
		return fmt.Errorf("%w: %d bytes, want %d..%d", ErrPassphraseLength, len(p), MinPassphraseLen, MaxPassphraseLen)
	}
	return nil
}

func checkKeyLen(n int) error {
	if n != 16 && n != 24 && n != 32 {
		return fmt.Errorf("%w: got %d", ErrKeyLength, n)
	}
	return nil
}

// pbkdf2SHA1 is PBKDF2 with HMAC-SHA1 (RFC 8018 §5.2), the KDF SRT uses.
func pbkdf2SHA1(passphrase string, salt []byte, iter, n int) ([]byte, error) {
	return pbkdf2.Key(sha1.New, passphrase, salt, iter, n)
}

// kek is a key encrypting key and what it was derived from, so a KM with the same salt and key
// length (every refresh libsrt sends) reuses it instead of running PBKDF2 again.
type kek struct {
	block  cipher.Block
	salt   [SaltLen]byte
	keyLen int
}

// deriveKEK computes KEK = PBKDF2(passphrase, LSB(64, salt), 2048, keyLen) (draft-sharabayko-srt
// §6.2.1): the KEK is as long as the SEK it wraps.
func deriveKEK(passphrase string, salt []byte, keyLen int) (*kek, error) {
	if len(salt) != SaltLen {
		return nil, fmt.Errorf("%w: salt of %d bytes, want %d", ErrInvalidKM, len(salt), SaltLen)
	}
	key, err := pbkdf2SHA1(passphrase, salt[SaltLen-pbkdf2SaltLen:], PBKDF2Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("srt crypt: pbkdf2: %w", err)
	}
	block, err := aes.NewCipher(key)
	clear(key)
	if err != nil {
		return nil, fmt.Errorf("srt crypt: kek: %w", err)
	}
	k := &kek{block: block, keyLen: keyLen}
	copy(k.salt[:], salt)
	return k, nil
}

// matches reports whether k was derived for this salt and key length.
func (k *kek) matches(salt []byte, keyLen int) bool {
	return k != nil && k.keyLen == keyLen && string(k.salt[:]) == string(salt)
}
