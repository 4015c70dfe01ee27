package api

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/internal/tcvalues"
	"github.com/sluicemedia/sluice/storage"
)

// Enumerations of the transcoding object (spec 2.2).
var (
	videoCodecs = []string{"libx264", "libx265", "mpsoc_vcu_h264", "mpsoc_vcu_hevc", "Disabled"}
	presets     = []string{"Disabled", "ultrafast", "superfast", "very fast", "faster", "fast", "medium", "slow", "slower", "veryslow"}
	tunes       = []string{"Disabled", "film", "animation", "grain", "stillimage", "fastdecode", "zerolatency"}
	pixFmts     = []string{"Disable", "yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv16", "nv21", "yuv420p10le", "yuv444p10le", "nv20le"}
	audioCodecs = []string{"aac", "mp3", "Disabled"}
	sampleRates = []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000}
)

// validateTranscoding reads a transcoding object (spec 2.2, API.md aliases and types).
func validateTranscoding(f *fields) *storage.Transcoding {
	var t storage.Transcoding
	t.VideoTranscoding, _ = f.enum("video_transcoding", false, videoCodecs...)
	t.OutputVideoBitrate = f.optInt("output_video_bitrate", 1, 200000)
	t.ForceKeyFrames = forceKeyFrames(f)
	t.GOP = f.optInt("gop", 1, 1000)
	t.FrameWidth = f.optInt("frame_width", 0, 7680)
	t.FrameHeight = f.optInt("frame_height", 0, 4320)
	t.Preset, _ = f.enum("preset", false, presets...)
	t.Tune, _ = f.enum("tune", false, tunes...)
	t.CRF = f.optInt("crf", 0, 51)
	t.PixFmt, _ = f.enum("pix_fmt", false, pixFmts...)
	if fps, ok := f.number("filter_fps", false, 0, 240, true); ok {
		t.FilterFPS = &fps
	}
	f.alias("audio_trancoding", "audio_transcoding")
	t.AudioTranscoding, _ = f.enum("audio_trancoding", false, audioCodecs...)
	t.OutputAudioBitrate = f.optInt("output_audio_bitrate", 8, 1024)
	if sr := f.optInt("sample_rate", 1, 1000000); sr != nil {
		if !containsInt(sampleRates, *sr) {
			f.fail("sample_rate", "must be one of %s", joinInts(sampleRates))
		}
		t.SampleRate = sr
	}
	checkMP3(f, &t)
	t.Slices = f.optInt("slices", 0, 68)
	t.Cores = f.optInt("cores", 0, 4)
	checkFrameSize(f, t.FrameWidth, t.FrameHeight)
	f.done()
	if !f.ok() {
		return nil
	}
	return &t
}

// forceKeyFrames is a number of seconds (0 < n ≤ 60) or a string ffmpeg's -force_key_frames
// accepts, in the subset tcvalues.CheckKeyFrames checks (safe on ffmpeg's command line).
func forceKeyFrames(f *fields) any {
	v, ok := f.get("force_key_frames", false)
	if !ok {
		return nil
	}
	if s, isStr := v.(string); isStr {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			return nil
		case looksNumeric(s) && !jsonNumber.MatchString(s):
			// "inf", "NaN", "1e999", "0x10": ffmpeg and the transcoder read these as numbers,
			// so they are judged as numbers, not let through as expressions.
			if x, err := strconv.ParseFloat(s, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				f.fail("force_key_frames", "must be a finite number of seconds (from 0 to 60) or an expression")
				return nil
			}
			f.fail("force_key_frames", "must be a number of seconds written as a JSON number (e.g. 2 or 0.5), or an expression")
			return nil
		case !jsonNumber.MatchString(s):
			if err := tcvalues.CheckKeyFrames(s); err != nil {
				f.fail("force_key_frames", "must be a number of seconds, an expression such as expr:gte(t,n_forced*2) or a list of times such as 0,2,4 (%v)", err)
				return nil
			}
			return s
		}
	}
	n, ok := f.number("force_key_frames", false, 0, 60, true)
	if !ok {
		return nil
	}
	return n
}

// looksNumeric tells whether strconv.ParseFloat reads s as a number, out of range included:
// the spellings of infinity and NaN, hexadecimal and underscored forms as well as decimals.
func looksNumeric(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

func checkFrameSize(f *fields, w, h *int) {
	if w == nil && h == nil {
		return
	}
	var wv, hv int
	if w != nil {
		wv = *w
	}
	if h != nil {
		hv = *h
	}
	switch {
	case wv == 0 && hv == 0:
		f.fail("frame_width", "frame_width and frame_height must not both be 0")
	case wv%2 != 0:
		f.fail("frame_width", "must be an even number")
	case hv%2 != 0:
		f.fail("frame_height", "must be an even number")
	}
}

// checkMP3 refuses what mp3 cannot do: a sample rate outside its layer III rates the server
// reads, a bitrate over 320 kbit/s.
func checkMP3(f *fields, t *storage.Transcoding) {
	if t.AudioTranscoding != "mp3" {
		return
	}
	if sr := t.SampleRate; sr != nil && containsInt(sampleRates, *sr) && !containsInt(tcvalues.MP3SampleRates, *sr) {
		f.fail("sample_rate", "must be one of %s with mp3 (aac takes the others)", joinInts(tcvalues.MP3SampleRates))
	}
	if br := t.OutputAudioBitrate; br != nil && *br > tcvalues.MP3MaxKbps {
		f.fail("output_audio_bitrate", "must be at most %d with mp3", tcvalues.MP3MaxKbps)
	}
}

func containsInt(list []int, n int) bool {
	for _, e := range list {
		if e == n {
			return true
		}
	}
	return false
}

func joinInts(list []int) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
