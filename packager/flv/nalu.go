package flv

import (
	"encoding/binary"
	"fmt"
)

// splitAVCC appends to dst the NAL units of length-prefixed data (ISO/IEC 14496-15); they
// alias b.
func splitAVCC(b []byte, lengthSize int, dst [][]byte) ([][]byte, error) {
	for len(b) > 0 {
		if len(b) < lengthSize {
			return dst, fmt.Errorf("flv: %d bytes left for a %d-byte NAL unit length: %w", len(b), lengthSize, ErrMalformed)
		}
		var n uint32
		for _, c := range b[:lengthSize] {
			n = n<<8 | uint32(c)
		}
		b = b[lengthSize:]
		if uint64(n) > uint64(len(b)) {
			return dst, fmt.Errorf("flv: NAL unit of %d bytes with %d left: %w", n, len(b), ErrMalformed)
		}
		if n > 0 {
			dst = append(dst, b[:n:n])
		}
		b = b[n:]
	}
	return dst, nil
}

func appendAVCC(dst []byte, n []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(n)))
	return append(dst, n...)
}
