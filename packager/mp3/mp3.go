// Package mp3 tells what ingest and the packagers need to know of an MPEG audio layer III
// frame (ISO/IEC 11172-3 and 13818-3): whether it is one, its size in bytes and the decoder
// parameters its header gives. MPEG audio layers 1 and 2 are not carried.
package mp3

import (
	"errors"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg1audio"

	"github.com/sluicemedia/sluice/internal/media"
)

// ErrNotLayer3 is returned by Parse for an MPEG audio frame of layer 1 or 2.
var ErrNotLayer3 = errors.New("mp3: MPEG audio layer 1 or 2, not layer 3")

// Header is a layer III frame header.
type Header struct {
	mpeg1audio.FrameHeader
}

// Parse reads the frame header at the start of frame. It fails for bytes that are not an MPEG
// audio frame header, and with ErrNotLayer3 for one of layer 1 or 2.
func Parse(frame []byte) (Header, error) {
	var h Header
	if err := h.Unmarshal(frame); err != nil {
		return h, err
	}
	if h.Layer != 3 {
		return h, ErrNotLayer3
	}
	return h, nil
}

// Len is the frame's size in bytes, header included: samples/8 × bit rate / sample rate,
// plus the padding byte: 144 × bit rate / sample rate for MPEG-1, 72 × for MPEG-2 (mediacommon's
// FrameLen takes 144 for both).
func (h Header) Len() int {
	n := h.SampleCount() / 8 * h.Bitrate / h.SampleRate
	if h.Padding {
		n++
	}
	return n
}

// Params are the decoder parameters the header gives: the sample rate and the channels (one
// for mono, two for stereo, joint stereo and dual channel).
func (h Header) Params() media.Params {
	ch := 2
	if h.ChannelMode == mpeg1audio.ChannelModeMono {
		ch = 1
	}
	return media.Params{SampleRate: h.SampleRate, Channels: ch}
}
