package mpegts

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// Parameter sets of a 320x240 stream, from libx264 and libx265.
var (
	h264SPS = mustHex("6764000dacd94141fb011000000300100000030320f1429960")
	h264PPS = mustHex("68ebe3cb22c0")
	h265VPS = mustHex("40010c01ffff01600000030090000003000003003c959809")
	h265SPS = mustHex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210")
	h265PPS = mustHex("4401c172b46240")
	// AAC LC, 48 kHz, stereo.
	aacConfig = []byte{0x11, 0x90}
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func h264Track() media.Track {
	return media.Track{Codec: media.CodecH264, ClockRate: 90000,
		Params: media.Params{SPS: h264SPS, PPS: h264PPS, Width: 320, Height: 240}}
}

func h265Track() media.Track {
	return media.Track{Codec: media.CodecH265, ClockRate: 90000,
		Params: media.Params{VPS: h265VPS, SPS: h265SPS, PPS: h265PPS, Width: 320, Height: 240}}
}

func aacTrack() media.Track {
	return media.Track{Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: aacConfig, SampleRate: 48000, Channels: 2}}
}

func opusTrack() media.Track {
	return media.Track{Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}}
}

func mp3Track() media.Track {
	return media.Track{Codec: media.CodecMP3, ClockRate: 44100, Params: media.Params{SampleRate: 44100, Channels: 2}}
}

// noZeros fills n bytes that contain no zero, so that no start code can appear inside.
func noZeros(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + rng.IntN(255))
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
	sei, slice := noZeros(rng, 12), noZeros(rng, size)
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
	f := noZeros(rng, 417)
	copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
	return f
}

// synthStream builds units of the given tracks, interleaved by DTS: 25 fps video with key
// frames every gop frames (and a B-frame-like PTS pattern with reorder), audio at its frame
// duration.
func synthStream(tracks []media.Track, seconds float64, start int64, gop int, reorder bool) []*media.AccessUnit {
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
			au = videoUnit(rng, c.trk, key, c.n == 0, 500+rng.IntN(3000))
			au.DTS, au.PTS = dts, dts
			if reorder {
				au.PTS = dts + 3600*int64(1+c.n%3) // a B-frame-like reordering delay
			}
		case media.CodecAAC:
			au = &media.AccessUnit{Track: c.trk.ID, Key: true, Payload: [][]byte{noZeros(rng, 200+rng.IntN(200))}}
		case media.CodecMP3:
			au = &media.AccessUnit{Track: c.trk.ID, Key: true, Payload: [][]byte{mp3Frame(rng)}}
		case media.CodecOpus:
			p := noZeros(rng, 100+rng.IntN(300))
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

// muxAll writes units with a new Muxer and returns the stream.
func muxAll(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) []byte {
	t.Helper()
	var buf bytes.Buffer
	m, err := NewMuxer(&buf, tracks)
	if err != nil {
		t.Fatalf("NewMuxer: %v", err)
	}
	for _, au := range aus {
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatalf("WriteAccessUnit: %v", err)
		}
	}
	return buf.Bytes()
}

// withIDs numbers tracks in order.
func withIDs(tracks ...media.Track) []media.Track {
	for i := range tracks {
		tracks[i].ID = i
	}
	return tracks
}
