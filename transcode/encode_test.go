package transcode

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// The tests here run ffmpeg with the arguments Args builds, on a file, and check the
// output's properties with ffprobe and with the TS demuxer the server reads it with.

// h264240p is 4 s of 320x240 H.264 at 25 fps (a key frame a second) and AAC at 48 kHz.
func h264240p(t *testing.T) string {
	return fixture(t, "h264-240p", append(source(320, 240, 25, 4),
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-b:v", "400k",
		"-c:a", "aac", "-b:a", "64k")...)
}

// streamOf returns the index and the probe of the output's first stream of a kind.
func streamOf(t *testing.T, p probed, kind string) int {
	t.Helper()
	for i, s := range p.Streams {
		if s.CodecType == kind {
			return i
		}
	}
	t.Fatalf("no %s stream in %+v", kind, p.Streams)
	return -1
}

// keyFrames returns the indexes of the key frames among a stream's packets.
func keyFrames(p probed, stream int) (keys []int, frames int) {
	for _, pk := range p.Packets {
		if pk.StreamIndex != p.Streams[stream].Index {
			continue
		}
		if strings.HasPrefix(pk.Flags, "K") {
			keys = append(keys, frames)
		}
		frames++
	}
	return keys, frames
}

// TestEncodePixFmts encodes with every pix_fmt of the spec and both software encoders: ffmpeg
// must not fail, and the stream has the chroma layout and depth asked for (the semi-planar
// names give their planar equivalent; the full-range yuvj names may decode as the yuv ones).
func TestEncodePixFmts(t *testing.T) {
	in := h264240p(t)
	same := map[string]string{"nv12": "yuv420p", "nv21": "yuv420p", "nv16": "yuv422p", "nv20le": "yuv422p10le"}
	for _, enc := range []string{"libx264", "libx265"} {
		for _, pf := range []string{"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv16",
			"nv21", "yuv420p10le", "yuv444p10le", "nv20le"} {
			t.Run(enc+"/"+pf, func(t *testing.T) {
				out := encode(t, &Settings{VideoTranscoding: enc, PixFmt: pf, Preset: "ultrafast"}, in)
				p := ffprobe(t, out)
				v := p.Streams[streamOf(t, p, "video")]
				want := pf
				if s, ok := same[pf]; ok {
					want = s
				}
				if got := strings.Replace(v.PixFmt, "yuvj", "yuv", 1); got != strings.Replace(want, "yuvj", "yuv", 1) {
					t.Errorf("pix_fmt %s, want %s", v.PixFmt, want)
				}
				tracks, _ := streamtest.ReadTS(t, out)
				if tr := trackOf(tracks, true); tr.Params.Width != 320 || tr.Params.Height != 240 {
					t.Errorf("the server reads %s %dx%d, want 320x240", tr.Codec, tr.Params.Width, tr.Params.Height)
				}
			})
		}
	}
}

// TestEncodeKeyFrames checks where gop and force_key_frames (seconds, expression, list of
// times) put key frames, with both software encoders, on a 25 fps input.
func TestEncodeKeyFrames(t *testing.T) {
	in := h264240p(t)
	cases := []struct {
		name  string
		tc    Settings
		want  []int // frame indexes of the key frames
		slack int   // frames a key frame may be early: ffmpeg rounds listed times
	}{
		{"gop 10", Settings{GOP: ptr(10)}, []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}, 0},
		{"every 1.5 s", Settings{ForceKeyFrames: 1.5}, []int{0, 38, 75}, 0},
		{"expression", Settings{ForceKeyFrames: "expr:gte(t,n_forced*2)"}, []int{0, 50}, 0},
		{"list of times", Settings{ForceKeyFrames: "0,1,3.2"}, []int{0, 25, 80}, 1},
		{"gop 50 and every second", Settings{GOP: ptr(50), ForceKeyFrames: 1.0}, []int{0, 25, 50, 75}, 0},
	}
	for _, enc := range []string{"libx264", "libx265"} {
		for _, c := range cases {
			t.Run(enc+"/"+c.name, func(t *testing.T) {
				tc := c.tc
				tc.VideoTranscoding, tc.Preset = enc, "ultrafast"
				p := ffprobe(t, encode(t, &tc, in))
				keys, frames := keyFrames(p, streamOf(t, p, "video"))
				if frames != 100 {
					t.Errorf("%d frames, want 100", frames)
				}
				if !slices.EqualFunc(keys, c.want, func(got, want int) bool { return got <= want && got >= want-c.slack }) {
					t.Errorf("key frames at %v, want %v", keys, c.want)
				}
			})
		}
	}
}

// TestEncodeVideoFields runs every video field together (the spec's example, with a faster
// preset) and other combinations, and checks codec, size, frame rate and bitrate.
func TestEncodeVideoFields(t *testing.T) {
	in := h264240p(t)
	cases := []struct {
		name        string
		tc          Settings
		codec, size string
		fps         float64
		kbps        float64 // video bitrate, ±35 %; 0: not checked
		maxKbps     float64 // video bitrate at most (a cap plus its 2 × cap buffer over the 4 s, +10 %); 0: not checked
	}{
		{"every video field, x265", Settings{VideoTranscoding: "libx265", OutputVideoBitrate: ptr(300), ForceKeyFrames: 2.0, GOP: ptr(50),
			FrameWidth: ptr(480), FrameHeight: ptr(270), Preset: "fast", Tune: "zerolatency", CRF: ptr(0), PixFmt: "Disable",
			FilterFPS: ptr(29.97)}, "hevc", "480x270", 29.97, 0, 495},
		{"x264 bitrate, very fast", Settings{VideoTranscoding: "libx264", OutputVideoBitrate: ptr(200), Preset: "very fast",
			Tune: "film"}, "h264", "320x240", 25, 200, 0},
		{"x264 crf capped", Settings{VideoTranscoding: "libx264", CRF: ptr(0), OutputVideoBitrate: ptr(300),
			Tune: "stillimage", Preset: "Disabled"}, "h264", "320x240", 25, 0, 495},
		{"x265 crf 51, height only, 12.5 fps", Settings{VideoTranscoding: "libx265", CRF: ptr(51), FrameHeight: ptr(120),
			FilterFPS: ptr(12.5), Tune: "fastdecode", Preset: "superfast"}, "hevc", "160x120", 12.5, 0, 0},
		{"x264 width only, grain", Settings{VideoTranscoding: "libx264", FrameWidth: ptr(160), FrameHeight: ptr(0),
			Tune: "grain", Preset: "faster"}, "h264", "160x120", 25, 0, 0},
		{"x265 animation", Settings{VideoTranscoding: "libx265", Tune: "animation", Preset: "fast", OutputVideoBitrate: ptr(250)},
			"hevc", "320x240", 25, 250, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ffprobe(t, encode(t, &c.tc, in))
			i := streamOf(t, p, "video")
			v := p.Streams[i]
			if v.CodecName != c.codec || fmt.Sprintf("%dx%d", v.Width, v.Height) != c.size {
				t.Errorf("video %s %dx%d, want %s %s", v.CodecName, v.Width, v.Height, c.codec, c.size)
			}
			if fps := rate(v.AvgFrameRate); math.Abs(fps-c.fps) > 0.02 {
				t.Errorf("frame rate %s, want %v", v.AvgFrameRate, c.fps)
			}
			kbps := streamKbps(t, p, i)
			t.Logf("video %.0f kbit/s", kbps)
			if c.kbps > 0 && math.Abs(kbps-c.kbps)/c.kbps > 0.35 {
				t.Errorf("video at %.0f kbit/s, want %v ± 35 %%", kbps, c.kbps)
			}
			if c.maxKbps > 0 && kbps > c.maxKbps {
				t.Errorf("video at %.0f kbit/s, want at most %v", kbps, c.maxKbps)
			}
		})
	}
}

// TestEncodeAudio checks codec, sample rate and bitrate of the audio fields' output, as ffprobe
// and the server's demuxer read it.
func TestEncodeAudio(t *testing.T) {
	in := h264240p(t)
	cases := []struct {
		in    string // h264240p when empty
		tc    Settings
		codec media.Codec
		name  string // ffprobe's
		rate  int
		kbps  float64 // ±25 %; 0: not checked
	}{
		{"", Settings{AudioTranscoding: "aac", OutputAudioBitrate: ptr(96), SampleRate: ptr(44100)}, media.CodecAAC, "aac", 44100, 96},
		{"", Settings{AudioTranscoding: "aac", OutputAudioBitrate: ptr(32), SampleRate: ptr(22050)}, media.CodecAAC, "aac", 22050, 32},
		{"", Settings{AudioTranscoding: "aac", SampleRate: ptr(96000)}, media.CodecAAC, "aac", 96000, 0},
		{"", Settings{AudioTranscoding: "mp3", OutputAudioBitrate: ptr(64), SampleRate: ptr(22050)}, media.CodecMP3, "mp3", 22050, 64},
		{"", Settings{AudioTranscoding: "mp3", OutputAudioBitrate: ptr(32), SampleRate: ptr(16000)}, media.CodecMP3, "mp3", 16000, 32},
		{"", Settings{AudioTranscoding: "mp3", OutputAudioBitrate: ptr(320)}, media.CodecMP3, "mp3", 48000, 320},
		{"", Settings{SampleRate: ptr(16000)}, media.CodecAAC, "aac", 16000, 0},
		// mp3 keeps the input's rate unless it is one the server does not read (MPEG-2.5).
		{aac8k(t), Settings{AudioTranscoding: "mp3"}, media.CodecMP3, "mp3", 16000, 0},
		{aac8k(t), Settings{AudioTranscoding: "aac"}, media.CodecAAC, "aac", 8000, 0},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s %d Hz", i, c.name, c.rate), func(t *testing.T) {
			src := in
			if c.in != "" {
				src = c.in
			}
			out := encode(t, &c.tc, src)
			p := ffprobe(t, out)
			i := streamOf(t, p, "audio")
			if a := p.Streams[i]; a.CodecName != c.name || a.SampleRate != strconv.Itoa(c.rate) {
				t.Errorf("ffprobe: audio %s at %s Hz, want %s at %d", a.CodecName, a.SampleRate, c.name, c.rate)
			}
			tracks, _ := streamtest.ReadTS(t, out)
			if a := trackOf(tracks, false); a.Codec != c.codec || a.Params.SampleRate != c.rate {
				t.Errorf("the server reads %s at %d Hz, want %s at %d", a.Codec, a.Params.SampleRate, c.codec, c.rate)
			}
			kbps := streamKbps(t, p, i)
			t.Logf("audio %.0f kbit/s", kbps)
			if c.kbps > 0 && math.Abs(kbps-c.kbps)/c.kbps > 0.25 {
				t.Errorf("audio at %.0f kbit/s, want %v ± 25 %%", kbps, c.kbps)
			}
		})
	}
}

// aac8k is 2 s of 320x240 H.264 and AAC at 8 kHz.
func aac8k(t *testing.T) string {
	return fixture(t, "aac-8k", append(testutil.Pattern{Width: 320, Height: 240, SampleRate: 8000}.Args(), "-t", "2",
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", "-b:a", "24k")...)
}

// rate reads ffprobe's "num/den" frame rate.
func rate(s string) float64 {
	n, d, _ := strings.Cut(s, "/")
	x, _ := strconv.ParseFloat(n, 64)
	y, err := strconv.ParseFloat(d, 64)
	if err != nil || y == 0 {
		return 0
	}
	return x / y
}

// streamKbps is a stream's payload bitrate over the file's duration.
func streamKbps(t *testing.T, p probed, stream int) float64 {
	t.Helper()
	dur, err := strconv.ParseFloat(p.Format.Duration, 64)
	if err != nil || dur <= 0 {
		t.Fatalf("duration %q", p.Format.Duration)
	}
	bytes := 0
	for _, pk := range p.Packets {
		if pk.StreamIndex == p.Streams[stream].Index {
			n, _ := strconv.Atoi(pk.Size)
			bytes += n
		}
	}
	return float64(bytes) * 8 / dur / 1000
}
