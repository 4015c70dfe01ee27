package crypt

import (
	"encoding/binary"
	"errors"
)

// KM states (libsrt's SRT_KM_STATE), sent alone as a 4-byte KMRSP when a KMREQ could not be
// applied (draft-sharabayko-srt §3.2.1.3, "KM Response Error").
const (
	KMStateUnsecured     uint32 = 0 // no encryption
	KMStateSecuring      uint32 = 1 // encrypted, key material being exchanged
	KMStateSecured       uint32 = 2 // encrypted, key material exchanged
	KMStateNoSecret      uint32 = 3 // the responder has no passphrase
	KMStateBadSecret     uint32 = 4 // the responder's passphrase does not open the key material
	KMStateBadCryptoMode uint32 = 5 // the responder expects another cipher (libsrt ≥ 1.5.2)
)

// KMStateLen is the length of the KMRSP error form: one 32-bit KM state word, in bytes.
const KMStateLen = 4

// maxKMState is the largest KM state libsrt defines.
const maxKMState = KMStateBadCryptoMode

// ParseKMState reads the short KMRSP error form, if b is one: a single 32-bit KM state. A full
// Key Material message is never 4 bytes long, so ok tells the two forms apart.
//
// libsrt writes this word in its host byte order (it pre-swaps the KM for the network order
// swap it applies to every control word, and the state word is swapped along), so the libsrt
// peers that exist, all little-endian, send it little-endian ("04 00 00 00" for a bad secret,
// as the captures under testdata show). ParseKMState reads it little-endian, and big-endian when
// only that reading is a known state (a big-endian libsrt host).
func ParseKMState(b []byte) (state uint32, ok bool) {
	if len(b) != KMStateLen {
		return 0, false
	}
	state = binary.LittleEndian.Uint32(b)
	if be := binary.BigEndian.Uint32(b); state > maxKMState && be <= maxKMState {
		state = be
	}
	return state, true
}

// AppendKMState appends the short KMRSP error form carrying state, little-endian as libsrt on
// every little-endian host sends and expects it (see ParseKMState).
func AppendKMState(b []byte, state uint32) []byte {
	return binary.LittleEndian.AppendUint32(b, state)
}

// KMStateError returns the error a KMRSP state means for the side that sent the KMREQ: nil for
// KMStateSecured, ErrNoPassphrase when the peer has no passphrase (or, KMStateUnsecured, wants no
// encryption), ErrBadPassphrase when the peer's passphrase differs, ErrUnsupportedCipher for a
// cipher mode mismatch, ErrInvalidKM for any other value.
func KMStateError(state uint32) error {
	switch state {
	case KMStateSecured:
		return nil
	case KMStateUnsecured, KMStateNoSecret:
		return ErrNoPassphrase
	case KMStateBadSecret:
		return ErrBadPassphrase
	case KMStateBadCryptoMode:
		return ErrUnsupportedCipher
	}
	return ErrInvalidKM
}

// KMStateFor returns the KM state to answer a KMREQ with after NewReceiver or Update returned
// err, as libsrt does: KMStateSecured for nil, KMStateNoSecret for ErrNoPassphrase,
// KMStateBadCryptoMode for ErrUnsupportedCipher, KMStateBadSecret otherwise (a wrong passphrase
// or a malformed message).
func KMStateFor(err error) uint32 {
	switch {
	case err == nil:
		return KMStateSecured
	case errors.Is(err, ErrNoPassphrase):
		return KMStateNoSecret
	case errors.Is(err, ErrUnsupportedCipher):
		return KMStateBadCryptoMode
	}
	return KMStateBadSecret
}
