package link

import "github.com/sluicemedia/sluice/protocols/srt/wire"

// sealer encrypts one direction of a connection (protocols/srt/crypt's Sender).
type sealer interface {
	// KM appends the Key Material message announcing the current keys.
	KM(b []byte) []byte
	// Encrypt encrypts payload in place for packet seq; announce asks for a KM refresh.
	Encrypt(seq uint32, payload []byte) (kk wire.KeyIndex, announce bool)
}

// opener decrypts one direction of a connection (protocols/srt/crypt's Receiver).
type opener interface {
	Update(km []byte) error
	Decrypt(kk wire.KeyIndex, seq uint32, payload []byte) error
}

// keying builds the encryption of a connection; nil where encryption is not available.
type keying interface {
	// newSealer makes fresh keys of keyLen bytes from the passphrase (caller side).
	newSealer(passphrase string, keyLen int) (sealer, error)
	// open opens the peer's KM with the passphrase: the receiver of what the peer sends, and
	// the sender of the other direction using the same keys (HSv5's reverse KMX).
	open(passphrase string, km []byte) (opener, sealer, error)
	// newOpener opens the KM the listener echoed back to a caller.
	newOpener(passphrase string, km []byte) (opener, error)
	// kmState reads the 4-byte KM state an answer carries instead of a KM, if it is one.
	kmState(b []byte) (uint32, bool)
	// badPassphrase reports whether err means the KM does not open with the passphrase.
	badPassphrase(err error) bool
}

// KM states of a KMRSP error answer (SRT_KM_S_*).
const (
	kmUnsecured = 0
	kmNoSecret  = 3
	kmBadSecret = 4
)

// crypto is the encryption in use; see crypto_*.go.
var crypto keying
