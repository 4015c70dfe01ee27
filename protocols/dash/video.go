package dash

import "fmt"

// maxNALUnits bounds the NAL units split out of one sample.
const maxNALUnits = 1024

// splitNALUnits splits a sample of 4-byte length-prefixed NAL units (the only length size
// mp4ff reads in avcC and hvcC). Empty units are skipped.
func splitNALUnits(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d trailing bytes in a sample", errFMP4, len(b))
		}
		n := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
		b = b[4:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: NAL unit of %d bytes in %d", errFMP4, n, len(b))
		}
		if n > 0 {
			if len(out) >= maxNALUnits {
				return nil, fmt.Errorf("%w: over %d NAL units in a sample", errFMP4, maxNALUnits)
			}
			out = append(out, b[:n:n])
		}
		b = b[n:]
	}
	return out, nil
}
