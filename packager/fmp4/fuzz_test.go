package fmp4

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// FuzzInitSegment feeds arbitrary parameter sets (they come from the network) to the init
// segment writer and the codec string: errors are fine, panics are not.
func FuzzInitSegment(f *testing.F) {
	f.Add(uint8(media.CodecH264), mediatest.H264SPS, mediatest.H264PPS, []byte(nil))
	f.Add(uint8(media.CodecH265), mediatest.H265SPS, mediatest.H265PPS, mediatest.H265VPS)
	f.Add(uint8(media.CodecAAC), mediatest.AACConfig, []byte(nil), []byte(nil))
	f.Add(uint8(media.CodecAAC), []byte{0xf8, 0x00}, []byte(nil), []byte(nil))
	f.Add(uint8(media.CodecOpus), []byte(nil), []byte(nil), []byte(nil))
	f.Fuzz(func(t *testing.T, codec uint8, a, b, c []byte) {
		trk := media.Track{Codec: media.Codec(codec % 6), ClockRate: 90000}
		switch trk.Codec {
		case media.CodecH264:
			trk.Params = media.Params{SPS: a, PPS: b}
		case media.CodecH265:
			trk.Params = media.Params{SPS: a, PPS: b, VPS: c}
		default:
			trk.ClockRate = 48000
			trk.Params = media.Params{AudioConfig: a, Channels: len(b) % 10}
		}
		_, _ = InitSegment([]media.Track{trk})
		_, _ = CodecString(trk)
	})
}
