package wire

import "errors"

var (
	// ErrTruncated is returned for a packet or field shorter than its format requires.
	ErrTruncated = errors.New("srt wire: truncated")
	// ErrInvalid is returned for a field whose value the format does not allow.
	ErrInvalid = errors.New("srt wire: invalid")
	// ErrTooLarge is returned for a field over a cap (stream id, key material, datagram).
	ErrTooLarge = errors.New("srt wire: too large")
)
