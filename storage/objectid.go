package storage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// An ObjectId is 12 bytes written as 24 hex digits: 4 bytes of Unix seconds (big endian), 5 random
// bytes chosen once per process, and a 3-byte counter that starts at a random value.
var (
	idProcess [5]byte
	idCounter atomic.Uint32
)

func init() {
	_, _ = rand.Read(idProcess[:]) // crypto/rand.Read never fails; it aborts the program instead
	var start [4]byte
	_, _ = rand.Read(start[:])
	idCounter.Store(binary.BigEndian.Uint32(start[:]))
}

// NewID returns a new 24-hex-digit ObjectId; it is safe for concurrent use.
func NewID() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(time.Now().Unix()))
	copy(b[4:9], idProcess[:])
	c := idCounter.Add(1) // only the low 24 bits are used; wrapping is fine
	b[9], b[10], b[11] = byte(c>>16), byte(c>>8), byte(c)
	return hex.EncodeToString(b[:])
}

// ValidID tells whether s is an ObjectId: exactly 24 hex digits, either case.
func ValidID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
