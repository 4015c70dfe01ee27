package nal

// Open-GOP H.264 (x264's open-gop, many hardware encoders) starts its GOPs with non-IDR
// I-pictures marked by a recovery point SEI (ITU-T H.264 D.1.8, D.2.8): a decoder may start
// there. They are key frames for the gate, segmenting and recordings, as the container flags
// them (MPEG-TS random access, FLV key frame) and as an H.265 CRA picture is.

// maxSEIRead is the most bytes of an SEI unit read looking for a recovery point, on the stack:
// the messages before it in a unit (buffering period, picture timing) are well under it; x264
// puts its long user data in a unit of its own.
const maxSEIRead = 512

// nalSEI and nalSlice are the H.264 NAL unit types of an SEI and of a non-IDR slice.
const (
	nalSEI   = 6
	nalSlice = 1
)

// h264Recovery tells whether an H.264 NAL unit is an SEI holding a recovery point of zero
// frames: the picture it comes with, and all after it in output order, decode exactly from it.
func h264Recovery(n []byte) bool {
	if len(n) < 2 || n[0]&0x1f != nalSEI {
		return false
	}
	var buf [maxSEIRead]byte
	b := unescape(buf[:], n[1:])
	for pos := 0; pos < len(b) && b[pos] != 0x80; { // 0x80: rbsp_trailing_bits
		typ, pos1, ok := seiNumber(b, pos)
		if !ok {
			return false
		}
		size, pos2, ok := seiNumber(b, pos1)
		if !ok {
			return false
		}
		pos = pos2
		if pos+size > len(b) {
			return false
		}
		if typ == 6 { // recovery_point: recovery_frame_cnt ue(v) first
			r := bitReader{b: b[pos : pos+size]}
			cnt, ok := r.ue()
			return ok && cnt == 0
		}
		pos += size
	}
	return false
}

// seiNumber reads an SEI message's payload type or size at pos (bytes of 0xff, each adding 255,
// then the last byte) and returns it and where the message goes on.
func seiNumber(b []byte, pos int) (v, next int, ok bool) {
	for pos < len(b) && b[pos] == 0xff {
		v += 255
		pos++
	}
	if pos >= len(b) {
		return 0, pos, false
	}
	return v + int(b[pos]), pos + 1, true
}

// h264IntraSlice tells whether an H.264 NAL unit is a non-IDR slice of type I or SI.
func h264IntraSlice(n []byte) bool {
	if len(n) < 2 || n[0]&0x1f != nalSlice {
		return false
	}
	var buf [16]byte
	r := bitReader{b: unescape(buf[:], n[1:])}
	if _, ok := r.ue(); !ok { // first_mb_in_slice
		return false
	}
	t, ok := r.ue() // slice_type: 2 and 7 are I, 4 and 9 SI
	return ok && (t%5 == 2 || t%5 == 4)
}

// unescape copies b into dst without its emulation prevention bytes (0x000003 → 0x0000), as
// much as dst holds, and returns that part of dst.
func unescape(dst, b []byte) []byte {
	n, zeros := 0, 0
	for _, c := range b {
		if n == len(dst) {
			break
		}
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		dst[n] = c
		n++
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return dst[:n]
}

// bitReader reads bits most significant first.
type bitReader struct {
	b   []byte
	pos int // in bits
}

func (r *bitReader) bit() (uint32, bool) {
	if r.pos >= 8*len(r.b) {
		return 0, false
	}
	v := uint32(r.b[r.pos/8]>>(7-r.pos%8)) & 1
	r.pos++
	return v, true
}

// ue reads an unsigned Exp-Golomb code of at most 31 leading zeros.
func (r *bitReader) ue() (uint32, bool) {
	zeros := 0
	for {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		if b == 1 {
			break
		}
		if zeros++; zeros > 31 {
			return 0, false
		}
	}
	v := uint32(1)
	for range zeros {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		v = v<<1 | b
	}
	return v - 1, true
}
