package crypt

import (
	"encoding/binary"
	"fmt"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Key Material message constants (draft-sharabayko-srt §3.2.2; libsrt haicrypt/hcrypt_msg.h).
const (
	// KMHeaderLen is the fixed part of a Key Material message before the salt, in bytes.
	KMHeaderLen = 16
	// SaltLen is the salt length, in bytes: the only length SRT defines (128 bits).
	SaltLen = 16
	// WrapICVLen is the AES key wrap integrity check value that precedes the wrapped keys, in bytes.
	WrapICVLen = 8
	// MaxKMLen is the largest legal Key Material message: two 256-bit keys, in bytes.
	MaxKMLen = KMHeaderLen + SaltLen + WrapICVLen + 2*32
	// MinKMLen is the smallest legal Key Material message: one 128-bit key, in bytes.
	MinKMLen = KMHeaderLen + SaltLen + WrapICVLen + 16

	// KMVersion is the KM message version (V, 3 bits; the S bit above it is 0).
	KMVersion = 1
	// KMPacketType is the packet type of a Keying Material message (PT, 4 bits).
	KMPacketType = 2
	// KMSign is the signature: 'HAI' as a PnP vendor id, big-endian.
	KMSign = 0x2029

	// CipherAESCTR is the Cipher field value of AES-CTR, the only cipher supported here.
	CipherAESCTR = 2
	// CipherAESGCM is the Cipher field value of AES-GCM (libsrt ≥ 1.6 with cryptomode=2).
	CipherAESGCM = 4
	// AuthNone is the Auth field value for no message authentication (AES-CTR).
	AuthNone = 0
	// SEMPEGTSSRT is the stream encapsulation of SRT: MPEG-TS over SRT. libsrt refuses any other.
	SEMPEGTSSRT = 2
)

// KM is a parsed Key Material message (the KMREQ/KMRSP handshake extension payload and the CIF
// of the KM refresh control message). Salt and Wrap alias the parsed bytes.
type KM struct {
	Keys   wire.KeyIndex // KK: which SEKs the wrap carries (even, odd or both; both means even first)
	KEKI   uint32        // key encryption key index; 0 is the passphrase's key, the only one supported
	Cipher uint8         // CipherAESCTR
	Auth   uint8         // AuthNone
	SE     uint8         // SEMPEGTSSRT
	KeyLen int           // length of one SEK in bytes: 16, 24 or 32
	Salt   []byte        // SaltLen bytes
	Wrap   []byte        // WrapICVLen bytes of integrity check value, then the wrapped SEK(s)
}

// KeyCount returns how many SEKs the message carries.
func (k *KM) KeyCount() int {
	if k.Keys == wire.KeyBoth {
		return 2
	}
	return 1
}

// Len returns the encoded length of the message in bytes.
func (k *KM) Len() int { return KMHeaderLen + len(k.Salt) + len(k.Wrap) }

// ParseKM parses a Key Material message, checking every field and length before use. The error
// wraps ErrInvalidKM, or ErrUnsupportedCipher for a well-formed message naming another cipher.
func ParseKM(b []byte) (KM, error) {
	var k KM
	if len(b) < KMHeaderLen {
		return k, fmt.Errorf("%w: %d bytes, the header alone is %d", ErrInvalidKM, len(b), KMHeaderLen)
	}
	if b[0]>>4 != KMVersion {
		return k, fmt.Errorf("%w: version %d (S bit %d), want %d", ErrInvalidKM, (b[0]>>4)&7, b[0]>>7, KMVersion)
	}
	if pt := b[0] & 0xF; pt != KMPacketType {
		return k, fmt.Errorf("%w: packet type %d, want %d (keying material)", ErrInvalidKM, pt, KMPacketType)
	}
	if sign := binary.BigEndian.Uint16(b[1:3]); sign != KMSign {
		return k, fmt.Errorf("%w: signature %#04x, want %#04x", ErrInvalidKM, sign, KMSign)
	}
	// The 6 bits above KK are reserved; libsrt ignores them, and so do we.
	k.Keys = wire.KeyIndex(b[3] & 3)
	if k.Keys == wire.KeyNone {
		return k, fmt.Errorf("%w: KK is 0 (no key)", ErrInvalidKM)
	}
	k.KEKI = binary.BigEndian.Uint32(b[4:8])
	if k.KEKI != 0 {
		return k, fmt.Errorf("%w: KEKI %d, only the passphrase's key (0) is supported", ErrInvalidKM, k.KEKI)
	}
	k.Cipher, k.Auth, k.SE = b[8], b[9], b[10]
	if k.Cipher != CipherAESCTR {
		name := "unknown"
		switch k.Cipher {
		case 0:
			name = "none"
		case 1:
			name = "AES-ECB"
		case 3:
			name = "AES-CBC"
		case CipherAESGCM:
			name = "AES-GCM"
		}
		return k, fmt.Errorf("%w: cipher %d (%s), only AES-CTR (%d) is supported", ErrUnsupportedCipher, k.Cipher, name, CipherAESCTR)
	}
	if k.Auth != AuthNone {
		return k, fmt.Errorf("%w: auth %d with AES-CTR, want %d", ErrInvalidKM, k.Auth, AuthNone)
	}
	if k.SE != SEMPEGTSSRT {
		return k, fmt.Errorf("%w: stream encapsulation %d, want %d (MPEG-TS/SRT)", ErrInvalidKM, k.SE, SEMPEGTSSRT)
	}
	// Byte 11 and bytes 12..13 are reserved.
	slen, klen := int(b[14])*4, int(b[15])*4
	if slen != SaltLen {
		return k, fmt.Errorf("%w: salt length %d, want %d", ErrInvalidKM, slen, SaltLen)
	}
	if klen != 16 && klen != 24 && klen != 32 {
		return k, fmt.Errorf("%w: key length %d, want 16, 24 or 32", ErrInvalidKM, klen)
	}
	k.KeyLen = klen
	want := KMHeaderLen + slen + WrapICVLen + k.KeyCount()*klen
	if len(b) != want {
		return k, fmt.Errorf("%w: %d bytes, want %d for %d %s key(s) of %d bytes", ErrInvalidKM, len(b), want, k.KeyCount(), k.Keys, klen)
	}
	k.Salt = b[KMHeaderLen : KMHeaderLen+slen]
	k.Wrap = b[KMHeaderLen+slen:]
	return k, nil
}

// Append appends the encoded message to b. The fields are written as they are; ParseKM of the
// result succeeds when they are valid.
func (k *KM) Append(b []byte) []byte {
	b = append(b,
		KMVersion<<4|KMPacketType, KMSign>>8, KMSign&0xFF, byte(k.Keys&3),
		byte(k.KEKI>>24), byte(k.KEKI>>16), byte(k.KEKI>>8), byte(k.KEKI),
		k.Cipher, k.Auth, k.SE, 0,
		0, 0, byte(len(k.Salt)/4), byte(k.KeyLen/4))
	b = append(b, k.Salt...)
	return append(b, k.Wrap...)
}
