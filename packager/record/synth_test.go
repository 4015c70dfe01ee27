package record

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// Parameter sets of a 320x240 H.264 stream from libx264.
var (
	synthSPS = []byte{0x67, 0x64, 0x00, 0x0d, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0x20, 0xf1, 0x42, 0x99, 0x60}
	synthPPS = []byte{0x68, 0xeb, 0xe3, 0xcb, 0x22, 0xc0}
)

// syntheticUnits returns an H.264 + AAC stream of d without ffmpeg: 25 fps with a key frame
// every second, 48 kHz AAC frames. The bytes are not decodable pictures; the containers are.
func syntheticUnits(d time.Duration) ([]media.Track, []*media.AccessUnit) {
	tracks := []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000, Params: media.Params{SPS: synthSPS, PPS: synthPPS, Width: 320, Height: 240}},
		{ID: 1, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}},
	}
	var aus []*media.AccessUnit
	audio := int64(0)
	for i := range int(d / (40 * time.Millisecond)) {
		dts := int64(i) * 3600
		key := i%25 == 0
		nalType := byte(0x41)
		if key {
			nalType = 0x65
		}
		aus = append(aus, &media.AccessUnit{Track: 0, DTS: dts, PTS: dts, Key: key, Payload: [][]byte{{nalType, 0x88, 0x84, 0x00, 0x33}}})
		for ; audio*90000/48000 <= dts; audio += 1024 {
			aus = append(aus, &media.AccessUnit{Track: 1, DTS: audio, PTS: audio, Key: true, Payload: [][]byte{{0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c}}})
		}
	}
	return tracks, aus
}
