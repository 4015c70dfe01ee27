package bench

import (
	"fmt"
	"strings"
)

// The glass-to-glass stamp: every frame of the latency publisher carries the time it was made, in
// milliseconds since the epoch, as a row of black and white blocks that survive compression.
// Left to right: a white marker, the 24 bits of the time modulo 2^24 ms (4.7 h) in Gray code,
// least significant first, a parity block, a black marker; on a black band one block wide around
// them. Gray code makes two neighbouring milliseconds differ in one block, so a frame whose blocks
// were drawn across a millisecond boundary (each block is its own drawbox filter, which reads the
// clock on its own) still decodes to one of the two. The parity block is 1 − (time mod 2), which
// makes the number of white blocks among the 24 code blocks and the parity block odd: the parity
// of a Gray code word is its value's lowest bit. A reader unwraps the 24 bits against its own clock.
// testdata/player/stamp.js is the same decoder in the browser; keep the two in step.
const (
	// StampBits is how many bits of the time the stamp carries.
	StampBits = 24
	// stampBlocks is the row: marker, code, parity, marker.
	stampBlocks = StampBits + 3
)

// StampBlock is the side of a block in pixels for a picture height: 1/18 of it, even (a 4:2:0
// chroma sample covers two pixels), at least 8.
func StampBlock(height int) int {
	return max(8, height/18&^1)
}

// StampFilter is the ffmpeg filter chain that draws the stamp of value on frames of the given
// height. value is an ffmpeg expression in milliseconds since the epoch, evaluated per frame and
// per block: "S+floor(t*1000)" is a start time plus the frame's timestamp (see stampSource for
// the live publisher's wall clock).
func StampFilter(value string, height int) string {
	b := StampBlock(height)
	u := fmt.Sprintf("mod(%s,%d)", value, 1<<StampBits)
	var f []string
	f = append(f, fmt.Sprintf("drawbox=x=%d:y=%d:w=%d:h=%d:color=black:t=fill", b/2, b/2, (stampBlocks+1)*b, 2*b))
	box := func(i int, enable string) {
		s := fmt.Sprintf("drawbox=x=%d:y=%d:w=%d:h=%d:color=white:t=fill", b*(1+i), b, b, b)
		if enable != "" {
			s += ":enable='" + enable + "'"
		}
		f = append(f, s)
	}
	box(0, "")
	for k := range StampBits {
		box(1+k, fmt.Sprintf("mod(floor(%s/%d)+floor(%s/%d),2)", u, 1<<k, u, 1<<(k+1)))
	}
	box(1+StampBits, fmt.Sprintf("1-mod(%s,2)", u))
	// The last block stays black: the band drew it.
	return strings.Join(f, ",")
}

// DecodeStamp reads the stamp from a frame's luma plane (width × height bytes, one per pixel):
// the time modulo 2^StampBits ms, and false when the markers or the parity do not hold.
func DecodeStamp(luma []byte, width, height int) (uint32, bool) {
	b := StampBlock(height)
	if len(luma) < width*height || (stampBlocks+1)*b > width || 2*b > height {
		return 0, false
	}
	bit := func(i int) bool {
		x0, y0 := b*(1+i)+b/4, b+b/4
		sum := 0
		for y := y0; y < y0+b/2; y++ {
			for x := x0; x < x0+b/2; x++ {
				sum += int(luma[y*width+x])
			}
		}
		return sum/(b/2*b/2) >= 128
	}
	if !bit(0) || bit(stampBlocks-1) {
		return 0, false
	}
	var gray uint32
	ones := 0
	for k := range StampBits {
		if bit(1 + k) {
			gray |= 1 << k
			ones++
		}
	}
	if bit(1 + StampBits) {
		ones++
	}
	if ones%2 != 1 {
		return 0, false
	}
	v := gray
	for s := gray >> 1; s != 0; s >>= 1 {
		v ^= s
	}
	return v, true
}

// UnwrapStamp is the time in milliseconds since the epoch whose low StampBits bits are code and
// which is at most 2^StampBits ms before now (milliseconds since the epoch).
func UnwrapStamp(code uint32, now int64) int64 {
	const m = int64(1) << StampBits
	return now - ((now-int64(code))%m+m)%m
}
