package transcode

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

var (
	inH264AAC = []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000, Params: media.Params{Width: 1280, Height: 720}},
		{ID: 1, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}},
	}
	inH265Opus = []media.Track{
		{ID: 0, Codec: media.CodecH265, ClockRate: 90000},
		{ID: 1, Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}},
	}
	inMP3   = []media.Track{{ID: 0, Codec: media.CodecMP3, ClockRate: 44100, Params: media.Params{SampleRate: 44100}}}
	inVideo = []media.Track{{ID: 0, Codec: media.CodecH264, ClockRate: 90000}}
	// inVideoAAC11k has AAC at 11025 Hz, a rate MP3 writes as MPEG-2.5.
	inVideoAAC11k = []media.Track{inVideo[0], {ID: 1, Codec: media.CodecAAC, ClockRate: 11025, Params: media.Params{SampleRate: 11025, Channels: 1}}}

	hwNVENC = HW{Encoders: []string{"h264_nvenc", "hevc_nvenc"}}
	hwQSV   = HW{Encoders: []string{"h264_qsv", "hevc_qsv"}}
	hwVAAPI = HW{Encoders: []string{"h264_vaapi", "hevc_vaapi"}, VAAPIDevice: "/dev/dri/renderD129"}
	hwNone  = HW{Probed: []string{"h264_nvenc: no NVIDIA device", "h264_vaapi: no render device"}}
)

// want assembles an expected argument list from its middle parts.
func want(parts ...[]string) []string {
	out := slices.Clone(argsHead)
	var global, mid []string
	for _, p := range parts {
		if len(p) > 0 && p[0] == "-vaapi_device" {
			global = p
			continue
		}
		mid = append(mid, p...)
	}
	out = append(out, global...)
	out = append(out, argsIn...)
	out = append(out, mid...)
	return append(out, argsOut...)
}

func a(s ...string) []string { return s }

var (
	vcopy = a("-c:v", "copy")
	acopy = a("-c:a", "copy")
	x265  = "log-level=error:open-gop=0"
)

type argsCase struct {
	name  string
	tc    *Settings
	in    []media.Track
	hw    HW
	want  []string
	err   error  // errors.Is
	msg   string // in the error message
	notes []string
}

var argsCases = []argsCase{
	{name: "nil copies", tc: nil, in: inH264AAC, want: want(vcopy, acopy)},
	{name: "disabled copies", tc: &Settings{VideoTranscoding: "Disabled", AudioTranscoding: "Disabled", Preset: "Disabled", Tune: "Disabled", PixFmt: "Disable"},
		in: inH264AAC, want: want(vcopy, acopy)},
	{name: "slices and cores alone copy", tc: &Settings{Slices: ptr(4), Cores: ptr(2)}, in: inH264AAC, want: want(vcopy, acopy),
		notes: []string{"slices: only for hardware encoders; video is copied", "cores: only for hardware encoders; video is copied"}},
	{name: "libx264", tc: &Settings{VideoTranscoding: "libx264"}, in: inH264AAC, want: want(a("-c:v", "libx264"), acopy)},
	{name: "libx265 not tagged hvc1", tc: &Settings{VideoTranscoding: "libx265"}, in: inH264AAC,
		want: want(a("-c:v", "libx265", "-x265-params", x265), acopy)},
	{name: "bitrate alone re-encodes with the input codec", tc: &Settings{OutputVideoBitrate: ptr(2500)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-b:v", "2500k", "-maxrate", "2500k", "-bufsize", "5000k"), acopy)},
	{name: "H.265 input re-encodes with libx265", tc: &Settings{GOP: ptr(48)}, in: inH265Opus,
		want: want(a("-c:v", "libx265", "-g", "48", "-x265-params", x265+":keyint=48:min-keyint=48:scenecut=0"), acopy)},
	{name: "scale both sides", tc: &Settings{FrameWidth: ptr(1280), FrameHeight: ptr(720)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-vf", "scale=1280:720"), acopy)},
	{name: "scale width keeps aspect", tc: &Settings{FrameWidth: ptr(640), FrameHeight: ptr(0)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-vf", "scale=640:-2"), acopy)},
	{name: "scale height keeps aspect", tc: &Settings{FrameHeight: ptr(480)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-vf", "scale=-2:480"), acopy)},
	{name: "scale both 0", tc: &Settings{FrameWidth: ptr(0), FrameHeight: ptr(0)}, in: inH264AAC, err: ErrInvalid, msg: "both 0"},
	{name: "scale odd", tc: &Settings{FrameWidth: ptr(641)}, in: inH264AAC, err: ErrInvalid, msg: "even"},
	{name: "scale negative", tc: &Settings{FrameHeight: ptr(-2)}, in: inH264AAC, err: ErrInvalid, msg: "negative"},
	{name: "fps after scale", tc: &Settings{FrameWidth: ptr(640), FilterFPS: ptr(15.0)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-vf", "scale=640:-2,fps=15"), acopy)},
	{name: "fractional fps", tc: &Settings{FilterFPS: ptr(29.97)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-vf", "fps=29.97"), acopy)},
	{name: "fps 0", tc: &Settings{FilterFPS: ptr(0.0)}, in: inH264AAC, err: ErrInvalid, msg: "filter_fps"},
	{name: "gop x264 fixed", tc: &Settings{VideoTranscoding: "libx264", GOP: ptr(50)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0"), acopy)},
	{name: "gop 0", tc: &Settings{GOP: ptr(0)}, in: inH264AAC, err: ErrInvalid, msg: "gop 0"},
	{name: "force key frames seconds", tc: &Settings{ForceKeyFrames: 2.0}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-force_key_frames", "expr:gte(t,n_forced*2)", "-forced-idr", "1"), acopy)},
	{name: "force key frames fraction from JSON", tc: &Settings{ForceKeyFrames: json.Number("1.5")}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-force_key_frames", "expr:gte(t,n_forced*1.5)", "-forced-idr", "1"), acopy)},
	{name: "force key frames int", tc: &Settings{ForceKeyFrames: 4}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-force_key_frames", "expr:gte(t,n_forced*4)", "-forced-idr", "1"), acopy)},
	{name: "force key frames numeric string", tc: &Settings{ForceKeyFrames: " 3 "}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-force_key_frames", "expr:gte(t,n_forced*3)", "-forced-idr", "1"), acopy)},
	{name: "force key frames expression", tc: &Settings{ForceKeyFrames: "expr:gte(t,n_forced*2)"}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-force_key_frames", "expr:gte(t,n_forced*2)", "-forced-idr", "1"), acopy)},
	{name: "force key frames list", tc: &Settings{ForceKeyFrames: "0,2,4,6"}, in: inH265Opus,
		want: want(a("-c:v", "libx265", "-force_key_frames", "0,2,4,6", "-forced-idr", "1", "-x265-params", x265), acopy)},
	{name: "force key frames empty string is unset", tc: &Settings{ForceKeyFrames: ""}, in: inH264AAC, want: want(vcopy, acopy)},
	{name: "force key frames option injection", tc: &Settings{ForceKeyFrames: "-y"}, in: inH264AAC, err: ErrInvalid, msg: "neither a time"},
	{name: "force key frames space", tc: &Settings{ForceKeyFrames: "expr:1 -i x"}, in: inH264AAC, err: ErrInvalid, msg: "force_key_frames"},
	{name: "force key frames unknown function", tc: &Settings{ForceKeyFrames: "expr:foo(t)"}, in: inH264AAC, err: ErrInvalid, msg: "unknown function"},
	{name: "force key frames quote", tc: &Settings{ForceKeyFrames: "a'b"}, in: inH264AAC, err: ErrInvalid},
	{name: "force key frames 0 s", tc: &Settings{ForceKeyFrames: 0.0}, in: inH264AAC, err: ErrInvalid, msg: "above 0"},
	{name: "force key frames bool", tc: &Settings{ForceKeyFrames: true}, in: inH264AAC, err: ErrInvalid},
	{name: "preset very fast", tc: &Settings{Preset: "very fast"}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-preset", "veryfast"), acopy)},
	{name: "preset injection", tc: &Settings{Preset: "fast -y"}, in: inH264AAC, err: ErrInvalid, msg: "preset"},
	{name: "tune x264", tc: &Settings{Tune: "film"}, in: inH264AAC, want: want(a("-c:v", "libx264", "-tune", "film"), acopy)},
	{name: "tune x265 zerolatency", tc: &Settings{VideoTranscoding: "libx265", Tune: "zerolatency"}, in: inH264AAC,
		want: want(a("-c:v", "libx265", "-tune", "zerolatency", "-x265-params", x265), acopy)},
	{name: "tune x265 film ignored", tc: &Settings{VideoTranscoding: "libx265", Tune: "film"}, in: inH264AAC,
		want: want(a("-c:v", "libx265", "-x265-params", x265), acopy), notes: []string{`tune "film": libx265 has no match; ignored`}},
	{name: "crf", tc: &Settings{CRF: ptr(23)}, in: inH264AAC, want: want(a("-c:v", "libx264", "-crf", "23"), acopy)},
	{name: "crf capped by bitrate", tc: &Settings{CRF: ptr(20), OutputVideoBitrate: ptr(3000)}, in: inH264AAC,
		want: want(a("-c:v", "libx264", "-crf", "20", "-maxrate", "3000k", "-bufsize", "6000k"), acopy)},
	{name: "crf 0 capped by bitrate is crf 1 for x264", tc: &Settings{CRF: ptr(0), OutputVideoBitrate: ptr(3000)}, in: inH264AAC,
		want:  want(a("-c:v", "libx264", "-crf", "1", "-maxrate", "3000k", "-bufsize", "6000k"), acopy),
		notes: []string{"crf 0: lossless cannot be capped by output_video_bitrate; libx264 uses crf 1"}},
	{name: "crf 0 alone stays lossless", tc: &Settings{CRF: ptr(0)}, in: inH264AAC, want: want(a("-c:v", "libx264", "-crf", "0"), acopy)},
	{name: "crf 52", tc: &Settings{CRF: ptr(52)}, in: inH264AAC, err: ErrInvalid, msg: "crf 52"},
	{name: "bitrate 0", tc: &Settings{OutputVideoBitrate: ptr(0)}, in: inH264AAC, err: ErrInvalid, msg: "output_video_bitrate"},
	{name: "pix_fmt", tc: &Settings{PixFmt: "yuv420p"}, in: inH264AAC, want: want(a("-c:v", "libx264", "-pix_fmt", "yuv420p"), acopy)},
	{name: "pix_fmt nv16 as planar", tc: &Settings{PixFmt: "nv16"}, in: inH264AAC, want: want(a("-c:v", "libx264", "-pix_fmt", "yuv422p"), acopy),
		notes: []string{"pix_fmt nv16: libx264 encodes it as yuv422p"}},
	{name: "pix_fmt nv12 kept for hardware", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264", PixFmt: "nv12"}, in: inH264AAC, hw: hwNVENC,
		want: want(a("-c:v", "h264_nvenc", "-pix_fmt", "nv12"), acopy)},
	{name: "pix_fmt injection", tc: &Settings{PixFmt: "-y"}, in: inH264AAC, err: ErrInvalid},
	{name: "every video field, x264", tc: &Settings{
		VideoTranscoding: "libx264", OutputVideoBitrate: ptr(4000), ForceKeyFrames: 2.0, GOP: ptr(60), FrameWidth: ptr(1920),
		FrameHeight: ptr(1080), Preset: "fast", Tune: "zerolatency", PixFmt: "yuv420p", FilterFPS: ptr(30.0)},
		in: inH264AAC, want: want(a("-c:v", "libx264", "-vf", "scale=1920:1080,fps=30", "-pix_fmt", "yuv420p", "-preset", "fast",
			"-tune", "zerolatency", "-b:v", "4000k", "-maxrate", "4000k", "-bufsize", "8000k", "-g", "60", "-keyint_min", "60",
			"-sc_threshold", "0", "-force_key_frames", "expr:gte(t,n_forced*2)", "-forced-idr", "1"), acopy)},
	{name: "slices with software ignored", tc: &Settings{VideoTranscoding: "libx264", Slices: ptr(4)}, in: inH264AAC,
		want: want(a("-c:v", "libx264"), acopy), notes: []string{"slices: only for hardware encoders; ignored with libx264"}},
	{name: "unknown video codec", tc: &Settings{VideoTranscoding: "vp9"}, in: inH264AAC, err: ErrInvalid, msg: `"vp9"`},

	// Hardware.
	{name: "mpsoc h264 nvenc", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264", Slices: ptr(4), Cores: ptr(2),
		Preset: "very fast", Tune: "zerolatency", CRF: ptr(25), ForceKeyFrames: 2.0, GOP: ptr(50)}, in: inH264AAC, hw: hwNVENC,
		want: want(a("-c:v", "h264_nvenc", "-preset", "p2", "-tune", "ull", "-cq", "25", "-g", "50",
			"-force_key_frames", "expr:gte(t,n_forced*2)", "-forced-idr", "1", "-slices", "4"), acopy),
		notes: []string{"cores: h264_nvenc has no such option; ignored"}},
	{name: "mpsoc hevc nvenc", tc: &Settings{VideoTranscoding: "mpsoc_vcu_hevc", OutputVideoBitrate: ptr(6000)}, in: inH264AAC, hw: hwNVENC,
		want: want(a("-c:v", "hevc_nvenc", "-b:v", "6000k", "-maxrate", "6000k", "-bufsize", "12000k"), acopy)},
	{name: "mpsoc qsv", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264", Preset: "ultrafast", Tune: "film", CRF: ptr(22), ForceKeyFrames: "expr:gte(t,n_forced*2)"},
		in: inH264AAC, hw: hwQSV, want: want(a("-c:v", "h264_qsv", "-preset", "veryfast", "-global_quality", "22",
			"-force_key_frames", "expr:gte(t,n_forced*2)", "-forced_idr", "1"), acopy),
		notes: []string{`tune "film": h264_qsv has no match; ignored`}},
	{name: "mpsoc vaapi uploads", tc: &Settings{VideoTranscoding: "mpsoc_vcu_hevc", FrameWidth: ptr(1280), FilterFPS: ptr(25.0),
		PixFmt: "yuv420p", Preset: "fast", CRF: ptr(24), Slices: ptr(2)}, in: inH264AAC, hw: hwVAAPI,
		want: want(a("-vaapi_device", "/dev/dri/renderD129"), a("-c:v", "hevc_vaapi", "-vf", "scale=1280:-2,fps=25,format=nv12,hwupload",
			"-qp", "24", "-slices", "2"), acopy),
		notes: []string{"pix_fmt yuv420p: hevc_vaapi uploads NV12; ignored", `preset "fast": hevc_vaapi has no match; ignored`}},
	{name: "mpsoc vaapi default device", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264"}, in: inH264AAC,
		hw: HW{Encoders: []string{"h264_vaapi"}}, want: want(a("-vaapi_device", DefaultVAAPIDevice), a("-c:v", "h264_vaapi", "-vf", "format=nv12,hwupload"), acopy)},
	{name: "mpsoc without hardware", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264"}, in: inH264AAC, hw: hwNone,
		err: ErrNoHardware, msg: "available: none; probed h264_nvenc: no NVIDIA device; h264_vaapi: no render device"},
	{name: "mpsoc hevc with only h264 hardware", tc: &Settings{VideoTranscoding: "mpsoc_vcu_hevc"}, in: inH264AAC,
		hw: HW{Encoders: []string{"h264_qsv"}, Probed: []string{"hevc_qsv: test encode failed"}}, err: ErrNoHardware, msg: "available: h264_qsv"},
	{name: "mpsoc never probed", tc: &Settings{VideoTranscoding: "mpsoc_vcu_h264"}, in: inH264AAC,
		err: ErrNoHardware, msg: "hardware was not probed"},

	// Audio.
	{name: "aac", tc: &Settings{AudioTranscoding: "aac", OutputAudioBitrate: ptr(128)}, in: inH264AAC,
		want: want(vcopy, a("-c:a", "aac", "-b:a", "128k"))},
	{name: "mp3 all fields", tc: &Settings{AudioTranscoding: "mp3", OutputAudioBitrate: ptr(96), SampleRate: ptr(44100)}, in: inH264AAC,
		want: want(vcopy, a("-c:a", "libmp3lame", "-b:a", "96k", "-ar", "44100"))},
	{name: "sample rate alone re-encodes with the input codec", tc: &Settings{SampleRate: ptr(32000)}, in: inMP3,
		want: want(a("-c:a", "libmp3lame", "-ar", "32000"))},
	{name: "opus input bitrate", tc: &Settings{OutputAudioBitrate: ptr(64)}, in: inH265Opus,
		want: want(vcopy, a("-c:a", "libopus", "-b:a", "64k"))},
	{name: "opus input kept as copy", tc: &Settings{VideoTranscoding: "libx264"}, in: inH265Opus,
		want: want(a("-c:v", "libx264"), acopy)},
	{name: "opus rate", tc: &Settings{SampleRate: ptr(44100)}, in: inH265Opus, err: ErrInvalid, msg: "opus takes"},
	{name: "mp3 8 kHz is MPEG-2.5", tc: &Settings{AudioTranscoding: "mp3", SampleRate: ptr(8000)}, in: inH264AAC, err: ErrInvalid, msg: "mp3 takes"},
	{name: "mp3 from 11.025 kHz input resampled", tc: &Settings{AudioTranscoding: "mp3"}, in: inVideoAAC11k,
		want:  want(a("-c:v", "copy"), a("-c:a", "libmp3lame", "-ar", "16000")),
		notes: []string{"audio: the input's 11025 Hz is not an mp3 rate the server reads; resampled to 16000 Hz"}},
	{name: "mp3 96 kHz", tc: &Settings{AudioTranscoding: "mp3", SampleRate: ptr(96000)}, in: inH264AAC, err: ErrInvalid, msg: "mp3 takes"},
	{name: "mp3 512 kbit/s", tc: &Settings{AudioTranscoding: "mp3", OutputAudioBitrate: ptr(512)}, in: inH264AAC, err: ErrInvalid, msg: "at most 320"},
	{name: "audio bitrate 0", tc: &Settings{OutputAudioBitrate: ptr(0)}, in: inH264AAC, err: ErrInvalid},
	{name: "unknown audio codec", tc: &Settings{AudioTranscoding: "flac"}, in: inH264AAC, err: ErrInvalid, msg: `"flac"`},

	// The spec's example set, and inputs missing a kind.
	{name: "test set", tc: &Settings{VideoTranscoding: "libx265", FrameWidth: ptr(640), FrameHeight: ptr(0), GOP: ptr(50),
		OutputVideoBitrate: ptr(800), AudioTranscoding: "mp3", OutputAudioBitrate: ptr(96), SampleRate: ptr(44100), Preset: "very fast"},
		in: inH264AAC, want: want(a("-c:v", "libx265", "-vf", "scale=640:-2", "-preset", "veryfast", "-b:v", "800k", "-maxrate", "800k",
			"-bufsize", "1600k", "-g", "50", "-x265-params", x265+":keyint=50:min-keyint=50:scenecut=0"),
			a("-c:a", "libmp3lame", "-b:a", "96k", "-ar", "44100"))},
	{name: "video only input", tc: &Settings{AudioTranscoding: "aac", CRF: ptr(30)}, in: inVideo,
		want: want(a("-c:v", "libx264", "-crf", "30")), notes: []string{"audio fields ignored: the input has no audio"}},
	{name: "audio only input", tc: &Settings{VideoTranscoding: "libx264", AudioTranscoding: "aac"}, in: inMP3,
		want: want(a("-c:a", "aac")), notes: []string{"video fields ignored: the input has no video"}},
	{name: "no input tracks", tc: &Settings{VideoTranscoding: "libx264"}, in: nil, msg: "no input tracks"},
}

func TestArgs(t *testing.T) {
	for _, c := range argsCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Args(c.tc, c.in, c.hw)
			if c.err != nil || c.msg != "" {
				if err == nil {
					t.Fatalf("Args = %q, want an error", got)
				}
				if c.err != nil && !errors.Is(err, c.err) {
					t.Errorf("error %v, want %v", err, c.err)
				}
				if !strings.Contains(err.Error(), c.msg) {
					t.Errorf("error %q, want it to contain %q", err, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Args: %v", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Args\n got %q\nwant %q", got, c.want)
			}
			if notes := Notes(c.tc, c.in, c.hw); !slices.Equal(notes, c.notes) {
				t.Errorf("Notes = %q, want %q", notes, c.notes)
			}
		})
	}
}

func TestPassthrough(t *testing.T) {
	cases := []struct {
		tc   *Settings
		want bool
	}{
		{nil, true},
		{&Settings{}, true},
		{&Settings{VideoTranscoding: "Disabled", AudioTranscoding: "Disabled", Preset: "Disabled", Tune: "Disabled", PixFmt: "Disable"}, true},
		{&Settings{Slices: ptr(4), Cores: ptr(2)}, true},
		{&Settings{ForceKeyFrames: "  "}, true},
		{&Settings{VideoTranscoding: "libx264"}, false},
		{&Settings{AudioTranscoding: "aac"}, false},
		{&Settings{OutputVideoBitrate: ptr(1000)}, false},
		{&Settings{ForceKeyFrames: 2.0}, false},
		{&Settings{GOP: ptr(50)}, false},
		{&Settings{FrameWidth: ptr(640)}, false},
		{&Settings{FrameHeight: ptr(360)}, false},
		{&Settings{Preset: "fast"}, false},
		{&Settings{Tune: "film"}, false},
		{&Settings{CRF: ptr(23)}, false},
		{&Settings{PixFmt: "yuv420p"}, false},
		{&Settings{FilterFPS: ptr(25.0)}, false},
		{&Settings{OutputAudioBitrate: ptr(128)}, false},
		{&Settings{SampleRate: ptr(44100)}, false},
	}
	for i, c := range cases {
		if got := Passthrough(c.tc); got != c.want {
			t.Errorf("%d: Passthrough(%+v) = %v, want %v", i, c.tc, got, c.want)
		}
	}
}

// FuzzArgs: no transcoding object makes Args panic or put an option where a value belongs.
func FuzzArgs(f *testing.F) {
	for _, c := range argsCases {
		if c.tc != nil {
			s, _ := c.tc.ForceKeyFrames.(string)
			f.Add(c.tc.Preset, c.tc.PixFmt, s, deref(c.tc.FrameWidth), deref(c.tc.GOP))
		}
	}
	f.Fuzz(func(t *testing.T, preset, pixFmt, kf string, width, gop int) {
		tc := &Settings{Preset: preset, PixFmt: pixFmt, ForceKeyFrames: kf, FrameWidth: &width, GOP: &gop}
		args, err := Args(tc, inH264AAC, hwVAAPI)
		if err != nil {
			return
		}
		flags := map[string]bool{"-hide_banner": true, "-nostdin": true, "-nostats": true}
		for i := 1; i < len(args); i++ {
			if strings.HasPrefix(args[i], "-") && strings.HasPrefix(args[i-1], "-") && !flags[args[i-1]] {
				t.Fatalf("option %q follows option %q: %q", args[i], args[i-1], args)
			}
		}
	})
}
