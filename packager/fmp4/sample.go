package fmp4

import (
	"bytes"

	"github.com/sluicemedia/sluice/internal/media"
)

// NAL unit types left out of samples (ITU-T H.264 table 7-1, H.265 table 7-1).
const (
	h264SPS = 7
	h264PPS = 8
	h264AUD = 9
	h265VPS = 32
	h265SPS = 33
	h265PPS = 34
	h265AUD = 35
)

// appendVideoSample appends the unit's NAL units to dst, each after its 4-byte big-endian
// length. Delimiters and parameter sets equal to the track's are skipped: the sample entry
// has them. Parameter sets that differ are kept, so a decoder still sees a change in band.
func appendVideoSample(dst []byte, t *media.Track, au *media.AccessUnit) []byte {
	h265 := t.Codec == media.CodecH265
	for _, n := range au.Payload {
		if len(n) == 0 || skipNALU(t, h265, n) {
			continue
		}
		l := len(n)
		dst = append(dst, byte(l>>24), byte(l>>16), byte(l>>8), byte(l))
		dst = append(dst, n...)
	}
	return dst
}

// skipNALU tells whether n is a delimiter or one of the track's own parameter sets.
func skipNALU(t *media.Track, h265 bool, n []byte) bool {
	p := &t.Params
	if h265 {
		switch (n[0] >> 1) & 0x3f {
		case h265AUD:
			return true
		case h265VPS:
			return bytes.Equal(n, p.VPS)
		case h265SPS:
			return bytes.Equal(n, p.SPS)
		case h265PPS:
			return bytes.Equal(n, p.PPS)
		}
		return false
	}
	switch n[0] & 0x1f {
	case h264AUD:
		return true
	case h264SPS:
		return bytes.Equal(n, p.SPS)
	case h264PPS:
		return bytes.Equal(n, p.PPS)
	}
	return false
}

// appendAudioSample appends the unit's frame bytes to dst.
func appendAudioSample(dst []byte, au *media.AccessUnit) []byte {
	for _, p := range au.Payload {
		dst = append(dst, p...)
	}
	return dst
}

// defaultDuration is a sample duration for a track with a single sample so far: a frame at
// 25 fps for video, the codec's frame length for audio.
func defaultDuration(t *media.Track) uint32 {
	switch t.Codec {
	case media.CodecAAC:
		return 1024
	case media.CodecMP3:
		if t.ClockRate < 32000 {
			return 576
		}
		return 1152
	case media.CodecOpus:
		return uint32(t.ClockRate / 50) // 20 ms
	}
	return uint32(max(t.ClockRate/25, 1))
}
