package crypt

import (
	"fmt"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Receiver decrypts one direction of a connection. It is used by one goroutine at a time;
// Update may be called between Decrypts.
type Receiver struct {
	passphrase string
	keyLen     int
	kek        *kek    // the last KEK derived, reused while the peer's salt stays the same
	keys       [2]*sek // [0] even, [1] odd; nil when not held
}

// NewReceiver opens the peer's KM message with passphrase (ErrBadPassphrase when it does not open).
func NewReceiver(passphrase string, km []byte) (*Receiver, error) {
	if err := CheckPassphrase(passphrase); err != nil {
		return nil, fmt.Errorf("srt crypt: receiver: %w", err)
	}
	r := &Receiver{passphrase: passphrase}
	if err := r.apply(km, true); err != nil {
		return nil, err
	}
	return r, nil
}

// Update applies a refresh KM from the peer (new odd or even key); old keys stay until replaced.
// On error the Receiver is unchanged.
func (r *Receiver) Update(km []byte) error {
	return r.apply(km, false)
}

// Decrypt decrypts payload in place; an error when kk names a key it does not hold
// (ErrUnknownKey, ErrNotEncrypted for wire.KeyNone), the payload then left as it was. It allocates
// nothing, errors included.
func (r *Receiver) Decrypt(kk wire.KeyIndex, seq uint32, payload []byte) error {
	switch kk {
	case wire.KeyEven, wire.KeyOdd:
		k := r.keys[kk-1]
		if k == nil {
			return ErrUnknownKey
		}
		k.xor(seq, payload)
		return nil
	case wire.KeyNone:
		return ErrNotEncrypted
	}
	return ErrUnknownKey
}

// KeyLen returns the SEK length in bytes.
func (r *Receiver) KeyLen() int { return r.keyLen }

// Has reports whether the Receiver holds the key kk names.
func (r *Receiver) Has(kk wire.KeyIndex) bool {
	return (kk == wire.KeyEven || kk == wire.KeyOdd) && r.keys[kk-1] != nil
}

func (r *Receiver) apply(km []byte, first bool) error {
	what := "update"
	if first {
		what = "receiver"
	}
	msg, keys, k, err := openKM(r.passphrase, km, r.kek)
	if err != nil {
		return fmt.Errorf("srt crypt: %s: %w", what, err)
	}
	defer clear(keys)
	if !first && msg.KeyLen != r.keyLen {
		return fmt.Errorf("srt crypt: update: %w: key length %d, the connection's is %d", ErrInvalidKM, msg.KeyLen, r.keyLen)
	}
	var installed [2]*sek
	for i, idx := range slots(msg.Keys) {
		s, err := newSEK(keys[i*msg.KeyLen:(i+1)*msg.KeyLen], msg.Salt)
		if err != nil {
			return fmt.Errorf("srt crypt: %s: %w", what, err)
		}
		installed[idx] = s
	}
	for i, s := range installed {
		if s != nil {
			if old := r.keys[i]; old != nil {
				old.wipe()
			}
			r.keys[i] = s
		}
	}
	r.keyLen = msg.KeyLen
	r.kek = k
	return nil
}

// slots lists the key slots ([0] even, [1] odd) a KM's KK fills, in the order of its wrapped
// keys: with both, the even key comes first.
func slots(kk wire.KeyIndex) []int {
	switch kk {
	case wire.KeyEven:
		return []int{0}
	case wire.KeyOdd:
		return []int{1}
	}
	return []int{0, 1}
}

// openKM parses km and unwraps its SEK(s) with the KEK of passphrase and the KM's salt (cached
// when it matches). keys holds the KeyCount SEKs back to back, in wrap order.
func openKM(passphrase string, km []byte, cached *kek) (msg KM, keys []byte, k *kek, err error) {
	msg, err = ParseKM(km)
	if err != nil {
		return msg, nil, nil, err
	}
	k = cached
	if !k.matches(msg.Salt, msg.KeyLen) {
		if k, err = deriveKEK(passphrase, msg.Salt, msg.KeyLen); err != nil {
			return msg, nil, nil, err
		}
	}
	keys, err = unwrapKey(make([]byte, 0, 2*32), k.block, msg.Wrap)
	if err != nil {
		return msg, nil, nil, err
	}
	return msg, keys, k, nil
}
