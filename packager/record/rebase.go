package record

import (
	"encoding/binary"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Box walking over encoded fragments (moof+mdat), to move their decode times.

// children calls fn for each box in b (a sequence of boxes) with its type and body.
func children(b []byte, fn func(typ string, body []byte)) {
	for len(b) >= 8 {
		n := int(binary.BigEndian.Uint32(b))
		if n < 8 || n > len(b) {
			return
		}
		fn(string(b[4:8]), b[8:n])
		b = b[n:]
	}
}

// fragmentTimes calls fn with each traf's track ID and its tfdt body (version and flags first).
func fragmentTimes(frag []byte, fn func(track uint32, tfdt []byte)) {
	children(frag, func(typ string, moof []byte) {
		if typ != "moof" {
			return
		}
		children(moof, func(typ string, traf []byte) {
			if typ != "traf" {
				return
			}
			var track uint32
			var tfdt []byte
			children(traf, func(typ string, body []byte) {
				switch {
				case typ == "tfhd" && len(body) >= 8:
					track = binary.BigEndian.Uint32(body[4:8])
				case typ == "tfdt" && len(body) >= 8:
					tfdt = body
				}
			})
			if tfdt != nil {
				fn(track, tfdt)
			}
		})
	})
}

// tfdtTime reads and setTfdtTime writes a tfdt body's baseMediaDecodeTime.
func tfdtTime(b []byte) uint64 {
	if b[0] == 1 && len(b) >= 12 {
		return binary.BigEndian.Uint64(b[4:12])
	}
	return uint64(binary.BigEndian.Uint32(b[4:8]))
}

func setTfdtTime(b []byte, v uint64) {
	if b[0] == 1 && len(b) >= 12 {
		binary.BigEndian.PutUint64(b[4:12], v)
		return
	}
	binary.BigEndian.PutUint32(b[4:8], uint32(v))
}

// rebase moves the decode times of the fragments in out (encoded moof+mdat pairs, modified in
// place) so that the earliest starts at zero; every track moves by the same time, which it
// returns.
func rebase(out []byte, tracks []media.Track) time.Duration {
	rate := func(id uint32) int {
		for _, t := range tracks {
			if uint32(t.ID+1) == id {
				return t.ClockRate
			}
		}
		return 0
	}
	start := time.Duration(-1)
	fragmentTimes(out, func(track uint32, tfdt []byte) {
		if r := rate(track); r > 0 {
			t := time.Duration(media.Rescale(int64(tfdtTime(tfdt)), r, int(time.Second)))
			if start < 0 || t < start {
				start = t
			}
		}
	})
	if start <= 0 {
		return 0
	}
	fragmentTimes(out, func(track uint32, tfdt []byte) {
		if r := rate(track); r > 0 {
			d := uint64(media.Rescale(int64(start), int(time.Second), r))
			v := tfdtTime(tfdt)
			setTfdtTime(tfdt, v-min(v, d))
		}
	})
	return start
}
