// Package media is the vocabulary of the packet path: tracks, codecs, their parameters and
// access units. It imports only the standard library.
package media

import "time"

// Codec identifies a compressed format carried natively.
type Codec uint8

// Codecs carried natively.
const (
	CodecUnknown Codec = iota
	CodecH264
	CodecH265
	CodecAAC
	CodecMP3
	CodecOpus
)

// String returns the codec's common name.
func (c Codec) String() string {
	switch c {
	case CodecH264:
		return "H264"
	case CodecH265:
		return "H265"
	case CodecAAC:
		return "AAC"
	case CodecMP3:
		return "MP3"
	case CodecOpus:
		return "Opus"
	}
	return "unknown"
}

// IsVideo tells whether the codec is a video codec.
func (c Codec) IsVideo() bool { return c == CodecH264 || c == CodecH265 }

// Kind is video or audio.
type Kind uint8

// Track kinds.
const (
	KindVideo Kind = iota + 1
	KindAudio
)

// Track describes one elementary stream of a Stream.
type Track struct {
	// ID is the track's index in its Stream, starting at 0.
	ID    int
	Codec Codec
	// ClockRate is the timestamp rate in Hz: 90000 for video, the sample rate for audio.
	ClockRate int
	Params    Params
}

// Kind returns the track's kind.
func (t *Track) Kind() Kind {
	if t.Codec.IsVideo() {
		return KindVideo
	}
	return KindAudio
}

// Params are a codec's decoder parameters.
type Params struct {
	// Video parameter sets, without start codes: VPS (H.265 only), SPS, PPS.
	VPS, SPS, PPS []byte
	// Width and Height in pixels, parsed from the SPS when known.
	Width, Height int
	// AudioConfig is the AAC AudioSpecificConfig.
	AudioConfig []byte
	// SampleRate in Hz and Channels for audio.
	SampleRate, Channels int
}

// AccessUnit is one decodable unit. Once written to a Stream it is shared read-only by every
// reader: no reader may modify it or its payload.
type AccessUnit struct {
	Track int
	// PTS and DTS are in ticks of the track's ClockRate.
	PTS, DTS int64
	Key      bool
	// Payload holds NAL units without start codes (video) or audio frames (audio).
	Payload [][]byte
	// Arrival is the wall-clock time the unit reached the server.
	Arrival time.Time
	// Discontinuity marks the first unit after the input came back from a gap.
	Discontinuity bool
}

// Size returns the payload size in bytes.
func (au *AccessUnit) Size() int {
	n := 0
	for _, p := range au.Payload {
		n += len(p)
	}
	return n
}

// Rescale converts a timestamp from one clock rate to another, rounding to nearest with halves
// away from zero, so that Rescale(-ts) == -Rescale(ts). It does not overflow for rates up to 2^31
// and any result that fits in an int64 (hours at 90 kHz are far from that limit). A rate that is
// not positive leaves ts unchanged.
func Rescale(ts int64, from, to int) int64 {
	if from == to || from <= 0 || to <= 0 {
		return ts
	}
	// Work on the magnitude: Go's division truncates toward zero, which would round negative
	// timestamps toward zero instead of to nearest. uint64 holds |math.MinInt64|.
	neg := ts < 0
	m := uint64(ts)
	if neg {
		m = -m
	}
	f, t := uint64(from), uint64(to)
	q, r := m/f, m%f
	v := q*t + (r*t+f/2)/f
	if neg {
		return -int64(v)
	}
	return int64(v)
}
