package mediatest

import (
	"math/rand/v2"

	"github.com/sluicemedia/sluice/internal/media"
)

// NoZeros returns n pseudo-random bytes that contain no zero, so that no start code can appear
// inside.
func NoZeros(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + rng.IntN(255))
	}
	return b
}

// VideoUnit builds a frame of an SEI and one slice of size bytes (H.264 or H.265 after trk's
// codec); withParams puts the parameter sets in front of a key frame.
func VideoUnit(rng *rand.Rand, trk media.Track, key, withParams bool, size int) *media.AccessUnit {
	au := &media.AccessUnit{Track: trk.ID, Key: key}
	h265 := trk.Codec == media.CodecH265
	if key && withParams {
		if h265 {
			au.Payload = append(au.Payload, trk.Params.VPS)
		}
		au.Payload = append(au.Payload, trk.Params.SPS, trk.Params.PPS)
	}
	sei, slice := NoZeros(rng, 12), NoZeros(rng, size)
	switch {
	case h265 && key:
		sei[0], sei[1] = 39<<1, 1     // PREFIX_SEI
		slice[0], slice[1] = 19<<1, 1 // IDR_W_RADL
	case h265:
		sei[0], sei[1] = 39<<1, 1
		slice[0], slice[1] = 1<<1, 1 // TRAIL_R
	case key:
		sei[0], slice[0] = 0x06, 0x65 // SEI, IDR
	default:
		sei[0], slice[0] = 0x06, 0x41 // SEI, non-IDR
	}
	au.Payload = append(au.Payload, sei, slice)
	return au
}

// MP3Frame is an MPEG-1 layer 3 frame: 128 kbit/s, 44.1 kHz, stereo, 417 bytes.
func MP3Frame(rng *rand.Rand) []byte {
	f := NoZeros(rng, 417)
	copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
	return f
}

// Synth builds seconds of units of the given tracks from start (90 kHz), interleaved by DTS,
// the same on every call: 25 fps video with a key frame every gop frames (the first with its
// parameter sets) and, with reorder, a B-frame-like PTS pattern; AAC, MP3 and Opus at their
// frame durations.
func Synth(tracks []media.Track, seconds float64, start int64, gop int, reorder bool) []*media.AccessUnit {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []*media.AccessUnit
	type cursor struct {
		trk  media.Track
		n    int
		step int64
	}
	var cs []*cursor
	for _, trk := range tracks {
		c := &cursor{trk: trk}
		switch trk.Codec {
		case media.CodecH264, media.CodecH265:
			c.step = 3600
		case media.CodecAAC:
			c.step = 1024
		case media.CodecMP3:
			c.step = 1152
		case media.CodecOpus:
			c.step = 960
		}
		cs = append(cs, c)
	}
	end := start + int64(seconds*90000)
	for {
		var best *cursor
		var bestT int64
		for _, c := range cs {
			t := media.Rescale(media.Rescale(start, 90000, c.trk.ClockRate)+int64(c.n)*c.step, c.trk.ClockRate, 90000)
			if best == nil || t < bestT {
				best, bestT = c, t
			}
		}
		if bestT >= end {
			return out
		}
		c := best
		dts := media.Rescale(start, 90000, c.trk.ClockRate) + int64(c.n)*c.step
		var au *media.AccessUnit
		switch c.trk.Codec {
		case media.CodecH264, media.CodecH265:
			key := c.n%gop == 0
			au = VideoUnit(rng, c.trk, key, c.n == 0, 500+rng.IntN(3000))
			au.DTS, au.PTS = dts, dts
			if reorder {
				au.PTS = dts + 3600*int64(1+c.n%3) // a B-frame-like reordering delay
			}
		case media.CodecAAC:
			au = &media.AccessUnit{Track: c.trk.ID, Key: true, Payload: [][]byte{NoZeros(rng, 200+rng.IntN(200))}}
		case media.CodecMP3:
			au = &media.AccessUnit{Track: c.trk.ID, Key: true, Payload: [][]byte{MP3Frame(rng)}}
		case media.CodecOpus:
			p := NoZeros(rng, 100+rng.IntN(300))
			p[0] = 0xfc // CELT FB 20 ms, one frame
			au = &media.AccessUnit{Track: c.trk.ID, Key: true, Payload: [][]byte{p}}
		}
		if !c.trk.Codec.IsVideo() {
			au.PTS, au.DTS = dts, dts
		}
		out = append(out, au)
		c.n++
	}
}
