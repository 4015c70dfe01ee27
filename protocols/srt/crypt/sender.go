package crypt

import (
	"crypto/rand"
	"fmt"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// phase is where a Sender is in its key refresh cycle.
type phase uint8

const (
	// steady: one key, announced alone.
	steady phase = iota
	// announced: the next key is made and announced with the active one; the active one still encrypts.
	announced
	// overlap: the new key encrypts; the old one stays announced for late and retransmitted packets.
	overlap
)

// Sender encrypts one direction of a connection. It is used by one goroutine at a time.
//
// Call Encrypt once per new packet and keep the ciphertext and its KK bits for retransmission:
// the key that encrypted a packet may be retired before the packet is sent again.
type Sender struct {
	kek    *kek
	salt   [SaltLen]byte
	keyLen int
	keys   [2]*sek // [0] even, [1] odd; nil when not held
	active int     // index in keys of the key that encrypts
	count  uint32  // packets encrypted with the active key since it became active
	phase  phase
	rate   uint32 // packets a key encrypts before the switch
	pre    uint32 // packets before the switch the next key is announced, and after it the old one retired
	km     []byte // the Key Material message announcing the key(s) held now
}

// NewSender makes fresh keys (random salt and even SEK) of keyLen bytes (16, 24, 32) from passphrase.
func NewSender(passphrase string, keyLen int, r Refresh) (*Sender, error) {
	if err := CheckPassphrase(passphrase); err != nil {
		return nil, fmt.Errorf("srt crypt: sender: %w", err)
	}
	if err := checkKeyLen(keyLen); err != nil {
		return nil, fmt.Errorf("srt crypt: sender: %w", err)
	}
	rate, pre, err := r.resolve()
	if err != nil {
		return nil, fmt.Errorf("srt crypt: sender: %w", err)
	}
	s := &Sender{keyLen: keyLen, rate: rate, pre: pre}
	_, _ = rand.Read(s.salt[:]) // crypto/rand.Read never returns an error; it aborts instead
	if s.kek, err = deriveKEK(passphrase, s.salt[:], keyLen); err != nil {
		return nil, fmt.Errorf("srt crypt: sender: %w", err)
	}
	if s.keys[0], err = s.randomSEK(); err != nil {
		return nil, err
	}
	if err := s.buildKM(); err != nil {
		return nil, err
	}
	return s, nil
}

// SenderFromKM makes the Sender for the other direction from the same keys (HSv5: the listener
// encrypts what it sends with the caller's keys), so one KM serves both directions. The Sender
// starts with the KM's even key (its odd key when it has only that) and refreshes on its own
// schedule from there, keeping the KM's salt as libsrt does.
func SenderFromKM(passphrase string, km []byte, r Refresh) (*Sender, error) {
	if err := CheckPassphrase(passphrase); err != nil {
		return nil, fmt.Errorf("srt crypt: sender from km: %w", err)
	}
	rate, pre, err := r.resolve()
	if err != nil {
		return nil, fmt.Errorf("srt crypt: sender from km: %w", err)
	}
	msg, keys, k, err := openKM(passphrase, km, nil)
	if err != nil {
		return nil, fmt.Errorf("srt crypt: sender from km: %w", err)
	}
	defer clear(keys)
	s := &Sender{kek: k, keyLen: msg.KeyLen, rate: rate, pre: pre}
	copy(s.salt[:], msg.Salt)
	// With both keys the even one comes first; with one, it is the only one.
	s.active = slots(msg.Keys)[0]
	if s.keys[s.active], err = newSEK(keys[:msg.KeyLen], msg.Salt); err != nil {
		return nil, fmt.Errorf("srt crypt: sender from km: %w", err)
	}
	if err := s.buildKM(); err != nil {
		return nil, err
	}
	return s, nil
}

// KM returns the Key Material message announcing the current key(s), wrapped with the passphrase's KEK
// (appended to b, so the caller controls allocation).
func (s *Sender) KM(b []byte) []byte { return append(b, s.km...) }

// KeyLen returns the SEK length in bytes.
func (s *Sender) KeyLen() int { return s.keyLen }

// Encrypt encrypts payload in place for packet sequence number seq and returns the KK bits to put in
// the packet header. When a refresh KM must be sent now (pre-announce, or the switch), announce
// reports true and the caller sends KM(...) to the peer in a KMREQ control message.
//
// The schedule: each key encrypts Rate packets. After Rate-PreAnnounce of them the next key is
// made and KM announces both (announce); after Rate the next key encrypts and KM, still with both,
// is announced again in case the first one was lost; PreAnnounce packets later the old key is
// retired and KM announces the new key alone (nothing to send: the peer has it).
func (s *Sender) Encrypt(seq uint32, payload []byte) (kk wire.KeyIndex, announce bool) {
	s.keys[s.active].xor(seq, payload)
	kk = wire.KeyIndex(s.active + 1)
	s.count++
	switch {
	case s.phase == steady && s.count >= s.rate-s.pre:
		next, err := s.randomSEK()
		if err != nil {
			// aes.NewCipher cannot fail on a 16/24/32-byte key; stay on the current key if it did.
			return kk, false
		}
		s.keys[1-s.active] = next
		s.phase = announced
		return kk, s.buildKM() == nil
	case s.phase == announced && s.count >= s.rate:
		s.active = 1 - s.active
		s.count = 0
		s.phase = overlap
		return kk, true
	case s.phase == overlap && s.count >= s.pre:
		old := 1 - s.active
		s.keys[old].wipe()
		s.keys[old] = nil
		s.phase = steady
		_ = s.buildKM() // a single wrap with a KEK that wrapped before: cannot fail
	}
	return kk, false
}

// randomSEK makes a new SEK of the Sender's length with its salt.
func (s *Sender) randomSEK() (*sek, error) {
	var key [32]byte
	_, _ = rand.Read(key[:s.keyLen])
	k, err := newSEK(key[:s.keyLen], s.salt[:])
	clear(key[:])
	if err != nil {
		return nil, fmt.Errorf("srt crypt: sender: %w", err)
	}
	return k, nil
}

// buildKM rewrites s.km to announce the keys held now (the even key first when both are).
func (s *Sender) buildKM() error {
	msg := KM{Cipher: CipherAESCTR, Auth: AuthNone, SE: SEMPEGTSSRT, KeyLen: s.keyLen, Salt: s.salt[:]}
	var plain [64]byte
	n := 0
	for i, k := range s.keys {
		if k != nil {
			msg.Keys |= wire.KeyIndex(1 << i)
			n += copy(plain[n:], k.key[:k.n])
		}
	}
	var wrap [WrapICVLen + 64]byte
	w, err := wrapKey(wrap[:0], s.kek.block, plain[:n])
	clear(plain[:])
	if err != nil {
		return fmt.Errorf("srt crypt: sender: %w", err)
	}
	msg.Wrap = w
	s.km = msg.Append(s.km[:0])
	return nil
}
