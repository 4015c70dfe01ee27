package transcode

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/tcvalues"
)

// Sample rates the audio encoders take; aac takes every rate the API allows, mp3 those of
// tcvalues.MP3SampleRates.
var opusRates = []int{8000, 12000, 16000, 24000, 48000}

// audio adds the audio arguments: copy unless a field asks for a change.
func (b *builder) audio(in *media.Track) error {
	tc := b.tc
	if in == nil {
		if wantsAudio(tc) {
			b.note("audio fields ignored: the input has no audio")
		}
		return nil
	}
	if !wantsAudio(tc) {
		b.add("-c:a", "copy")
		return nil
	}
	enc, err := audioEncoder(tc.AudioTranscoding, in.Codec)
	if err != nil {
		return err
	}
	b.add("-c:a", enc)
	if r := tc.OutputAudioBitrate; r != nil {
		switch {
		case *r <= 0:
			return fmt.Errorf("output_audio_bitrate %d: %w: must be above 0", *r, ErrInvalid)
		case enc == "libmp3lame" && *r > tcvalues.MP3MaxKbps:
			return fmt.Errorf("output_audio_bitrate %d: %w: mp3 allows at most %d kbit/s", *r, ErrInvalid, tcvalues.MP3MaxKbps)
		}
		b.add("-b:a", kbps(*r))
	}
	if sr := tc.SampleRate; sr != nil {
		switch {
		case *sr <= 0:
			return fmt.Errorf("sample_rate %d: %w: must be above 0", *sr, ErrInvalid)
		case enc == "libmp3lame" && !slices.Contains(tcvalues.MP3SampleRates, *sr):
			return fmt.Errorf("sample_rate %d: %w: mp3 takes %v Hz", *sr, ErrInvalid, tcvalues.MP3SampleRates)
		case enc == "libopus" && !slices.Contains(opusRates, *sr):
			return fmt.Errorf("sample_rate %d: %w: opus takes %v Hz", *sr, ErrInvalid, opusRates)
		}
		b.add("-ar", strconv.Itoa(*sr))
	} else if r := in.Params.SampleRate; enc == "libmp3lame" && r > 0 && !slices.Contains(tcvalues.MP3SampleRates, r) {
		// libmp3lame would keep the rate, and below 16 kHz write MPEG-2.5, which the server does
		// not read: the lowest mp3 rate at or above the input's instead.
		to := tcvalues.MP3SampleRates[len(tcvalues.MP3SampleRates)-1]
		if i := slices.IndexFunc(tcvalues.MP3SampleRates, func(m int) bool { return m >= r }); i >= 0 {
			to = tcvalues.MP3SampleRates[i]
		}
		b.note("audio: the input's %d Hz is not an mp3 rate the server reads; resampled to %d Hz", r, to)
		b.add("-ar", strconv.Itoa(to))
	}
	return nil
}

// audioEncoder names ffmpeg's encoder for audio_trancoding, or for the input's codec when
// only the bitrate or the sample rate is set.
func audioEncoder(codec string, in media.Codec) (string, error) {
	switch codec {
	case "aac":
		return "aac", nil
	case "mp3":
		return "libmp3lame", nil
	case "", "Disabled":
		switch in {
		case media.CodecAAC:
			return "aac", nil
		case media.CodecMP3:
			return "libmp3lame", nil
		case media.CodecOpus:
			return "libopus", nil
		}
		return "", fmt.Errorf("audio: %w: no encoder for input codec %s", ErrInvalid, in)
	}
	return "", fmt.Errorf("audio_trancoding %q: %w", codec, ErrInvalid)
}
