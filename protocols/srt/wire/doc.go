// Package wire reads and writes SRT packets (draft-sharabayko-srt, "The SRT Protocol", and
// libsrt's handshake.md): the 16-byte header, data packets, and every control type with its
// control information field (CIF).
//
// Parsers take the datagram as a byte slice and a caller-owned struct to fill; they check every
// length before reading and return an error wrapping ErrTruncated, ErrInvalid or ErrTooLarge,
// never panic, and do not allocate on the data path (slices in the result alias the input).
// Append functions add a packet or a CIF to the caller's slice.
//
// Numbers on the wire are big endian. Sequence numbers are 31 bits and wrap; use SeqAdd,
// SeqDiff and SeqLess to compare them. Timestamps are 32-bit microseconds since the sender's
// connection start and wrap after about 71.6 minutes.
package wire
