package fmp4

import "encoding/binary"

// RewriteDecodeTimes calls fn with the track ID and the baseMediaDecodeTime of each track
// fragment (a traf with a tfdt) of the moof boxes in frag, a sequence of boxes such as the
// Fragmenter encodes, and writes the time fn returns back in place (cut to 32 bits in a
// version 0 tfdt). Boxes that do not fit are left alone.
func RewriteDecodeTimes(frag []byte, fn func(track uint32, t uint64) uint64) {
	eachBox(frag, 0, func(typ string, moof []byte, _ int) {
		if typ != "moof" {
			return
		}
		eachBox(moof, 0, func(typ string, traf []byte, _ int) {
			if typ != "traf" {
				return
			}
			var track uint32
			var tfdt []byte
			eachBox(traf, 0, func(typ string, body []byte, _ int) {
				switch {
				case typ == "tfhd" && len(body) >= 8:
					track = binary.BigEndian.Uint32(body[4:8])
				case typ == "tfdt" && len(body) >= 8:
					tfdt = body
				}
			})
			if tfdt == nil {
				return
			}
			if tfdt[0] == 1 && len(tfdt) >= 12 {
				binary.BigEndian.PutUint64(tfdt[4:12], fn(track, binary.BigEndian.Uint64(tfdt[4:12])))
				return
			}
			binary.BigEndian.PutUint32(tfdt[4:8], uint32(fn(track, uint64(binary.BigEndian.Uint32(tfdt[4:8])))))
		})
	})
}
