package record

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// rebase moves the decode times of the fragments in out (encoded moof+mdat pairs, modified in
// place) so that the earliest starts at zero; every track moves by the same time, which it
// returns.
func rebase(out []byte, tracks []media.Track) time.Duration {
	rate := func(id uint32) int {
		for _, t := range tracks {
			if fmp4.TrackID(t) == id {
				return t.ClockRate
			}
		}
		return 0
	}
	start := time.Duration(-1)
	fmp4.RewriteDecodeTimes(out, func(track uint32, v uint64) uint64 {
		if r := rate(track); r > 0 {
			t := time.Duration(media.Rescale(int64(v), r, int(time.Second)))
			if start < 0 || t < start {
				start = t
			}
		}
		return v
	})
	if start <= 0 {
		return 0
	}
	fmp4.RewriteDecodeTimes(out, func(track uint32, v uint64) uint64 {
		if r := rate(track); r > 0 {
			d := uint64(media.Rescale(int64(start), int(time.Second), r))
			return v - min(v, d)
		}
		return v
	})
	return start
}
