package flv

import (
	"encoding/hex"
	"math/rand/v2"

	"github.com/sluicemedia/sluice/internal/media"
)

// Parameter sets of a 320x240 stream, from libx264 and libx265.
var (
	h264SPS   = mustHex("6764000dacd94141fb011000000300100000030320f1429960")
	h264PPS   = mustHex("68ebe3cb22c0")
	h265VPS   = mustHex("40010c01ffff01600000030090000003000003003c959809")
	h265SPS   = mustHex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210")
	h265PPS   = mustHex("4401c172b46240")
	aacConfig = []byte{0x11, 0x90} // AAC LC, 48 kHz, stereo
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func h264Track(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecH264, ClockRate: 90000,
		Params: media.Params{SPS: h264SPS, PPS: h264PPS, Width: 320, Height: 240}}
}

func h265Track(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecH265, ClockRate: 90000,
		Params: media.Params{VPS: h265VPS, SPS: h265SPS, PPS: h265PPS, Width: 320, Height: 240}}
}

func aacTrack(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: aacConfig, SampleRate: 48000, Channels: 2}}
}

func mp3Track(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecMP3, ClockRate: 44100, Params: media.Params{SampleRate: 44100, Channels: 2}}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// videoUnit builds a frame of an SEI and one slice; withParams puts the parameter sets in front.
func videoUnit(rng *rand.Rand, trk media.Track, key, withParams bool, size int) *media.AccessUnit {
	au := &media.AccessUnit{Track: trk.ID, Key: key}
	h265 := trk.Codec == media.CodecH265
	if key && withParams {
		if h265 {
			au.Payload = append(au.Payload, trk.Params.VPS)
		}
		au.Payload = append(au.Payload, trk.Params.SPS, trk.Params.PPS)
	}
	sei, slice := randomBytes(rng, 12), randomBytes(rng, size)
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

// mp3Frame is an MPEG-1 layer 3 frame: 128 kbit/s, 44.1 kHz, stereo, 417 bytes.
func mp3Frame(rng *rand.Rand) []byte {
	f := randomBytes(rng, 417)
	copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
	return f
}

// synthStream builds units interleaved by DTS from start (90 kHz): 25 fps video with a key
// frame every 25 and a B-frame-like PTS pattern, audio at its frame duration.
func synthStream(tracks []media.Track, seconds float64, start int64) []*media.AccessUnit {
	rng := rand.New(rand.NewPCG(1, 2))
	n := make([]int, len(tracks))
	step := func(t media.Track) int64 {
		switch t.Codec {
		case media.CodecAAC:
			return 1024
		case media.CodecMP3:
			return 1152
		}
		return 3600
	}
	var out []*media.AccessUnit
	end := start + int64(seconds*90000)
	for {
		best, bestT := -1, int64(0)
		for i, t := range tracks {
			at := media.Rescale(media.Rescale(start, 90000, t.ClockRate)+int64(n[i])*step(t), t.ClockRate, 90000)
			if best < 0 || at < bestT {
				best, bestT = i, at
			}
		}
		if bestT >= end {
			return out
		}
		t := tracks[best]
		dts := media.Rescale(start, 90000, t.ClockRate) + int64(n[best])*step(t)
		var au *media.AccessUnit
		switch t.Codec {
		case media.CodecH264, media.CodecH265:
			au = videoUnit(rng, t, n[best]%25 == 0, n[best] == 0, 300+rng.IntN(3000))
			au.DTS, au.PTS = dts, dts+3600*int64(n[best]%3)
		case media.CodecAAC:
			au = &media.AccessUnit{Track: t.ID, Key: true, PTS: dts, DTS: dts, Payload: [][]byte{randomBytes(rng, 200+rng.IntN(200))}}
		case media.CodecMP3:
			au = &media.AccessUnit{Track: t.ID, Key: true, PTS: dts, DTS: dts, Payload: [][]byte{mp3Frame(rng)}}
		}
		out = append(out, au)
		n[best]++
	}
}
