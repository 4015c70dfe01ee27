package fmp4

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
)

// Parameter sets of a 320x240 stream, from libx264 and libx265.
var (
	h264SPSBytes = mustHex("6764000dacd94141fb011000000300100000030320f1429960")
	h264PPSBytes = mustHex("68ebe3cb22c0")
	h265VPSBytes = mustHex("40010c01ffff01600000030090000003000003003c959809")
	h265SPSBytes = mustHex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210")
	h265PPSBytes = mustHex("4401c172b46240")
	aacConfig    = []byte{0x11, 0x90} // AAC LC, 48 kHz, stereo
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
		Params: media.Params{SPS: h264SPSBytes, PPS: h264PPSBytes, Width: 320, Height: 240}}
}

func h265Track(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecH265, ClockRate: 90000,
		Params: media.Params{VPS: h265VPSBytes, SPS: h265SPSBytes, PPS: h265PPSBytes, Width: 320, Height: 240}}
}

func aacTrack(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: aacConfig, SampleRate: 48000, Channels: 2}}
}

func mp3Track(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecMP3, ClockRate: 44100, Params: media.Params{SampleRate: 44100, Channels: 2}}
}

func opusTrack(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}}
}

// videoAU returns a frame: the parameter sets (on key frames), an SEI and one slice.
func videoAU(trk media.Track, dts, pts int64, key bool, size int) *media.AccessUnit {
	au := &media.AccessUnit{Track: trk.ID, DTS: dts, PTS: pts, Key: key}
	slice := bytes.Repeat([]byte{0xab}, size)
	sei := []byte{6, 5, 1, 0x80}
	if trk.Codec == media.CodecH265 {
		sei = []byte{39 << 1, 1, 5, 1, 0x80}
		slice[0], slice[1] = 1<<1, 1
		if key {
			slice[0] = 19 << 1
			au.Payload = append(au.Payload, []byte{35 << 1, 1, 0x50}, trk.Params.VPS, trk.Params.SPS, trk.Params.PPS)
		}
	} else {
		slice[0] = 1
		if key {
			slice[0] = 5
			au.Payload = append(au.Payload, []byte{9, 0xf0}, trk.Params.SPS, trk.Params.PPS)
		}
	}
	au.Payload = append(au.Payload, sei, slice)
	return au
}

func audioAU(trk media.Track, ts int64, size int) *media.AccessUnit {
	return &media.AccessUnit{Track: trk.ID, DTS: ts, PTS: ts, Key: true, Payload: [][]byte{bytes.Repeat([]byte{0x21}, size)}}
}

// decode parses a file (init or fragments) with mp4ff.
func decode(t *testing.T, b []byte) *mp4.File {
	t.Helper()
	f, err := mp4.DecodeFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("mp4ff decode: %v", err)
	}
	return f
}

// fileView adds helpers to a decoded file.
type fileView struct{ *mp4.File }

func (f fileView) stsd(i int) *mp4.StsdBox { return f.Moov.Traks[i].Mdia.Minf.Stbl.Stsd }
