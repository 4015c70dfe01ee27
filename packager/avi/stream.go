package avi

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mp3"
)

// Samples per frame of the audio codecs carried.
const (
	aacFrameSamples   = 1024
	mp3FrameSamples   = 1152
	mp3LSFrameSamples = 576 // MPEG-2 and 2.5 layer III
)

// stream is the state of one track's AVI stream. Its chunks have a constant duration of
// scale/rate seconds: one video frame, or one audio frame.
type stream struct {
	trk     media.Track
	video   bool
	id      fourCC // data chunk identifier, ##dc or ##wb
	handler fourCC // video codec FourCC
	// prefix holds the Annex B parameter sets put in front of key frames that lack them.
	prefix []byte
	// scale/rate is a chunk's duration in seconds.
	scale, rate uint32
	// silence is an audio frame that decodes to silence, to fill gaps; nil until known, or
	// when the codec's cannot be made (gaps then restart the stream's timeline).
	silence []byte
	// origin is the timestamp, in ticks of the track's clock, of the first chunk.
	origin int64

	count      int64 // chunks written, empty ones included
	segCount   int64 // chunks written in the current RIFF segment
	firstCount int64 // chunks in the first RIFF segment
	bytes      int64
	maxChunk   uint32
	super      []superEntry
}

// newStream checks that a track can be carried and prepares its stream.
func newStream(i int, trk media.Track) (*stream, error) {
	if trk.ClockRate <= 0 {
		return nil, fmt.Errorf("avi: track %d (%v): clock rate %d is not positive", i, trk.Codec, trk.ClockRate)
	}
	if !Carries(trk.Codec) {
		return nil, fmt.Errorf("avi: track %d: %w: %v (H264, H265, AAC and MP3 are)", i, ErrUnsupportedCodec, trk.Codec)
	}
	s := &stream{trk: trk, scale: 1, rate: 25}
	switch trk.Codec {
	case media.CodecH264, media.CodecH265:
		s.video, s.id, s.handler = true, chunkID(i, "dc"), fccH264
		if trk.Codec == media.CodecH265 {
			s.handler = fccH265
			s.prefix = appendAnnexB(s.prefix, trk.Params.VPS)
		}
		s.prefix = appendAnnexB(s.prefix, trk.Params.SPS)
		s.prefix = appendAnnexB(s.prefix, trk.Params.PPS)
	case media.CodecAAC:
		if len(trk.Params.AudioConfig) == 0 {
			return nil, fmt.Errorf("avi: track %d: AAC without an AudioSpecificConfig", i)
		}
		s.id, s.scale, s.rate = chunkID(i, "wb"), aacFrameSamples, uint32(s.sampleRate())
	case media.CodecMP3:
		s.id, s.scale, s.rate = chunkID(i, "wb"), mp3FrameSamples, uint32(s.sampleRate())
		if s.rate < 32000 {
			s.scale = mp3LSFrameSamples
		}
	}
	return s, nil
}

// Carries tells whether an AVI file carries codec c: H.264, H.265, AAC and MP3; not Opus.
func Carries(c media.Codec) bool {
	switch c {
	case media.CodecH264, media.CodecH265, media.CodecAAC, media.CodecMP3:
		return true
	}
	return false
}

// sampleRate is the audio sample rate in Hz.
func (s *stream) sampleRate() int {
	if s.trk.Params.SampleRate > 0 {
		return s.trk.Params.SampleRate
	}
	return s.trk.ClockRate
}

// probeMP3 takes the frame duration of an MP3 stream from its first frame's header.
func (s *stream) probeMP3(frame []byte) {
	if s.trk.Codec != media.CodecMP3 {
		return
	}
	h, err := mp3.Parse(frame)
	if err != nil {
		return
	}
	s.scale, s.rate = uint32(h.SampleCount()), uint32(h.SampleRate)
}

// fill returns the body of a chunk that fills one slot of a gap: empty for video (readers
// count a chunk of a vids stream as one frame), a silent frame for audio; ok is false when
// the gap cannot be filled. sample is a frame of the stream.
func (s *stream) fill(sample []byte) (body []byte, ok bool) {
	if s.video {
		return nil, true
	}
	if s.silence == nil {
		s.silence = silentFrame(s.trk, sample)
	}
	return s.silence, s.silence != nil
}

// slot returns the index of the chunk a timestamp falls on, rounded to nearest.
func (s *stream) slot(ts int64) int64 {
	return divRound((ts-s.origin)*int64(s.rate), int64(s.scale)*int64(s.trk.ClockRate))
}

// ticks returns the timestamp of chunk n, in ticks of the track's clock.
func (s *stream) ticks(n int64) int64 {
	return s.origin + divRound(n*int64(s.scale)*int64(s.trk.ClockRate), int64(s.rate))
}

// seconds returns the duration of n chunks.
func (s *stream) seconds(n int64) float64 {
	if s.rate == 0 {
		return 0
	}
	return float64(n) * float64(s.scale) / float64(s.rate)
}

// divRound divides rounding to nearest, halves away from zero; den must be positive.
func divRound(num, den int64) int64 {
	if num < 0 {
		return -((-num + den/2) / den)
	}
	return (num + den/2) / den
}

// appendAnnexB appends a NAL unit with a four-byte start code; an empty one is left out.
func appendAnnexB(b, n []byte) []byte {
	if len(n) == 0 {
		return b
	}
	return append(append(b, 0, 0, 0, 1), n...)
}
