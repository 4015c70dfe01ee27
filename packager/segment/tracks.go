package segment

import (
	"bytes"

	"github.com/sluicemedia/sluice/internal/media"
)

// sameTracks tells whether two track lists describe the same media: same IDs, codecs, clocks
// and decoder parameters. Segments then continue with the same init segment.
func sameTracks(a, b []media.Track) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.ID != y.ID || x.Codec != y.Codec || x.ClockRate != y.ClockRate || !sameParams(&x.Params, &y.Params) {
			return false
		}
	}
	return true
}

func sameParams(x, y *media.Params) bool {
	return bytes.Equal(x.VPS, y.VPS) && bytes.Equal(x.SPS, y.SPS) && bytes.Equal(x.PPS, y.PPS) &&
		bytes.Equal(x.AudioConfig, y.AudioConfig) && x.Width == y.Width && x.Height == y.Height &&
		x.SampleRate == y.SampleRate && x.Channels == y.Channels
}
