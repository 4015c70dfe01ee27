package crypt

import "errors"

// ErrBadPassphrase is returned when a Key Material message does not open with this passphrase
// (the AES key wrap integrity check fails).
var ErrBadPassphrase = errors.New("key material does not open with this passphrase")

// ErrNoPassphrase is returned when one side encrypts and the other has no passphrase.
var ErrNoPassphrase = errors.New("no passphrase on one side")

// ErrInvalidKM is returned for a malformed Key Material message.
var ErrInvalidKM = errors.New("invalid key material message")

// ErrUnsupportedCipher is returned for a Key Material message naming a cipher other than AES-CTR
// (such as AES-GCM, libsrt's cryptomode=2).
var ErrUnsupportedCipher = errors.New("unsupported cipher")

// ErrPassphraseLength is returned for a passphrase outside 10..80 bytes (libsrt's SRTO_PASSPHRASE range).
var ErrPassphraseLength = errors.New("passphrase length out of range")

// ErrKeyLength is returned for a key length other than 16, 24 or 32 bytes.
var ErrKeyLength = errors.New("key length must be 16, 24 or 32 bytes")

// ErrRefreshRates is returned for a refresh rate and pre-announce period libsrt would refuse.
var ErrRefreshRates = errors.New("invalid key refresh rates")

// ErrUnknownKey is returned by Decrypt when the packet names a key the Receiver does not hold.
var ErrUnknownKey = errors.New("packet encrypted with a key not held")

// ErrNotEncrypted is returned by Decrypt for a packet whose KK bits say it is not encrypted.
var ErrNotEncrypted = errors.New("packet not encrypted")
