// Package mediatest makes synthetic media for the tests of the packagers and the stream: the
// tracks of a small H.264, H.265, AAC, MP3 and Opus stream with real parameter sets, frames
// built of valid NAL unit headers, and interleaved streams of them. It depends on
// internal/media only, so that any package's tests may use it. For tests only.
package mediatest

import (
	"encoding/hex"

	"github.com/sluicemedia/sluice/internal/media"
)

// Parameter sets of a 320x240 stream, from libx264 and libx265, and an AAC configuration.
var (
	H264SPS = mustHex("6764000dacd94141fb011000000300100000030320f1429960")
	H264PPS = mustHex("68ebe3cb22c0")
	H265VPS = mustHex("40010c01ffff01600000030090000003000003003c959809")
	H265SPS = mustHex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210")
	H265PPS = mustHex("4401c172b46240")
	// AACConfig is AAC LC, 48 kHz, stereo.
	AACConfig = []byte{0x11, 0x90}
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// H264 returns a 320x240 H.264 track with media ID id.
func H264(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecH264, ClockRate: 90000,
		Params: media.Params{SPS: H264SPS, PPS: H264PPS, Width: 320, Height: 240}}
}

// H265 returns a 320x240 H.265 track with media ID id.
func H265(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecH265, ClockRate: 90000,
		Params: media.Params{VPS: H265VPS, SPS: H265SPS, PPS: H265PPS, Width: 320, Height: 240}}
}

// AAC returns a 48 kHz stereo AAC-LC track with media ID id.
func AAC(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: AACConfig, SampleRate: 48000, Channels: 2}}
}

// MP3 returns a 44.1 kHz stereo MP3 track with media ID id.
func MP3(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecMP3, ClockRate: 44100, Params: media.Params{SampleRate: 44100, Channels: 2}}
}

// Opus returns a 48 kHz stereo Opus track with media ID id.
func Opus(id int) media.Track {
	return media.Track{ID: id, Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}}
}

// WithIDs numbers tracks in order.
func WithIDs(tracks ...media.Track) []media.Track {
	for i := range tracks {
		tracks[i].ID = i
	}
	return tracks
}
