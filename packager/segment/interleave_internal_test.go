package segment

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// TestInterleaverBounds: units whose timestamps do not advance, of one track while the other
// sends nothing, are held up to maxInterleaveUnits, or maxInterleaveBytes, never more.
func TestInterleaverBounds(t *testing.T) {
	for _, size := range []int{100, 64 << 10} {
		var il interleaver
		il.reset([]media.Track{{ID: 0, Codec: media.CodecH264, ClockRate: 90000}, {ID: 1, Codec: media.CodecAAC, ClockRate: 48000}}, -1)
		most, out := 0, 0
		for range 3 * maxInterleaveUnits {
			il.push(&media.AccessUnit{Track: 0, DTS: 90000, PTS: 90000, Payload: [][]byte{make([]byte, size)}})
			for il.pop(false) != nil {
				out++
			}
			most = max(most, il.units)
			if il.bytes > maxInterleaveBytes+size {
				t.Fatalf("holding %d bytes", il.bytes)
			}
		}
		if most > maxInterleaveUnits+1 || out == 0 {
			t.Errorf("%d-byte units: held up to %d, %d let go", size, most, out)
		}
		for il.pop(true) != nil {
		}
		if il.units != 0 || il.bytes != 0 {
			t.Errorf("after draining: %d units, %d bytes", il.units, il.bytes)
		}
	}
}
