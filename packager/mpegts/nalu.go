package mpegts

import "bytes"

var startCode = []byte{0, 0, 1}

// splitAnnexB appends to dst the NAL units of an Annex B byte stream, without start codes
// or trailing zero bytes; bytes before the first start code are ignored. They alias b.
func splitAnnexB(b []byte, dst [][]byte) [][]byte {
	start := -1
	for i := 0; ; {
		j := bytes.Index(b[i:], startCode)
		if j < 0 {
			break
		}
		j += i
		if start >= 0 {
			dst = appendNALU(dst, b[start:j])
		}
		start = j + len(startCode)
		i = start
	}
	if start >= 0 {
		dst = appendNALU(dst, b[start:])
	}
	return dst
}

func appendNALU(dst [][]byte, n []byte) [][]byte {
	// Zero bytes before a start code belong to it (a 4-byte start code, trailing_zero_8bits).
	for len(n) > 0 && n[len(n)-1] == 0 {
		n = n[:len(n)-1]
	}
	if len(n) == 0 {
		return dst
	}
	return append(dst, n)
}

// Access unit delimiters the muxer inserts: H.264 primary_pic_type 7 (any slice type),
// H.265 pic_type 2 (any slice type), each with its stop bit.
var (
	audH264 = []byte{0x09, 0xf0}
	audH265 = []byte{0x46, 0x01, 0x50}
)
