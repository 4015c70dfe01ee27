package wire

import (
	"encoding/binary"
	"fmt"
)

// A NAK (loss report) CIF is a list of 32-bit words: a word with the top bit clear is one
// lost sequence number; a word with the top bit set starts a range and the next word is its
// last sequence number (inclusive). Its length is bounded by the datagram.

const nakRangeBit = 0x80000000

var (
	errNAKEmpty  = fmt.Errorf("%w: NAK without a loss entry", ErrTruncated)
	errNAKWord   = fmt.Errorf("%w: NAK CIF not a whole number of 32-bit words", ErrInvalid)
	errNAKOpen   = fmt.Errorf("%w: NAK range without its last sequence number", ErrTruncated)
	errNAKBadEnd = fmt.Errorf("%w: NAK range end has its top bit set", ErrInvalid)
	errNAKOrder  = fmt.Errorf("%w: NAK range ends before it starts", ErrInvalid)
)

// NAKReader walks the loss entries of a NAK CIF without allocating.
type NAKReader struct {
	cif []byte
	err error
}

// NewNAKReader checks cif as a whole (word alignment, every range closed and in order) and
// returns a reader over it; Err reports what the check found.
func NewNAKReader(cif []byte) NAKReader {
	r := NAKReader{cif: cif}
	r.err = checkNAK(cif)
	return r
}

func checkNAK(cif []byte) error {
	if len(cif) == 0 {
		return errNAKEmpty
	}
	if len(cif)%4 != 0 {
		return errNAKWord
	}
	for i := 0; i < len(cif); i += 4 {
		w := binary.BigEndian.Uint32(cif[i:])
		if w&nakRangeBit == 0 {
			continue
		}
		if i+8 > len(cif) {
			return errNAKOpen
		}
		end := binary.BigEndian.Uint32(cif[i+4:])
		if end&nakRangeBit != 0 {
			return errNAKBadEnd
		}
		if SeqLess(end, w&SeqMask) {
			return errNAKOrder
		}
		i += 4
	}
	return nil
}

// Err returns why the CIF is not a valid loss list, or nil.
func (r *NAKReader) Err() error { return r.err }

// Next returns the next lost range (first and last inclusive); ok is false at the end or
// when the CIF is invalid.
func (r *NAKReader) Next() (first, last uint32, ok bool) {
	if r.err != nil || len(r.cif) < 4 {
		return 0, 0, false
	}
	w := binary.BigEndian.Uint32(r.cif)
	if w&nakRangeBit == 0 {
		r.cif = r.cif[4:]
		return w, w, true
	}
	last = binary.BigEndian.Uint32(r.cif[4:])
	r.cif = r.cif[8:]
	return w & SeqMask, last, true
}

// AppendNAKRange appends the loss entry for first..last (one word for a single packet, two
// for a range).
func AppendNAKRange(b []byte, first, last uint32) []byte {
	first &= SeqMask
	last &= SeqMask
	if first == last {
		return binary.BigEndian.AppendUint32(b, first)
	}
	b = binary.BigEndian.AppendUint32(b, first|nakRangeBit)
	return binary.BigEndian.AppendUint32(b, last)
}

// NAKRangeLen is the number of CIF bytes AppendNAKRange writes for first..last.
func NAKRangeLen(first, last uint32) int {
	if first&SeqMask == last&SeqMask {
		return 4
	}
	return 8
}
