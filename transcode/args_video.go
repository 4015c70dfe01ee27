package transcode

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/internal/media"
)

// Presets of the x264 scale mapped to NVENC's p1 (fastest) … p7 (best) and to the names QSV
// takes; VAAPI has none.
var (
	nvencPresets = map[string]string{
		"ultrafast": "p1", "superfast": "p1", "veryfast": "p2", "faster": "p3", "fast": "p3",
		"medium": "p4", "slow": "p5", "slower": "p6", "veryslow": "p7",
	}
	qsvPresets = map[string]string{
		"ultrafast": "veryfast", "superfast": "veryfast", "veryfast": "veryfast", "faster": "faster",
		"fast": "fast", "medium": "medium", "slow": "slow", "slower": "slower", "veryslow": "veryslow",
	}
	// planar are the planar formats software encoders take for the semi-planar ones: the
	// same chroma layout and depth, the same stream. ffmpeg 5.1 cannot convert to nv16 or
	// nv20le, and libx265 takes no semi-planar format.
	planar = map[string]string{"nv12": "yuv420p", "nv21": "yuv420p", "nv16": "yuv422p", "nv20le": "yuv422p10le"}
	// x265Tunes are the spec's tunes x265 knows (it has no film or stillimage).
	x265Tunes = map[string]bool{"animation": true, "grain": true, "fastdecode": true, "zerolatency": true}
)

// video adds the video arguments and returns global options that must precede the input.
func (b *builder) video(in *media.Track) (global []string, err error) {
	tc := b.tc
	if in == nil {
		if wantsVideo(tc) {
			b.note("video fields ignored: the input has no video")
		}
		return nil, nil
	}
	if !wantsVideo(tc) {
		b.add("-c:v", "copy")
		b.hardwareOnly("", "video is copied")
		return nil, nil
	}
	enc, err := b.videoEncoder(in)
	if err != nil {
		return nil, err
	}
	fam := family(enc)
	b.add("-c:v", enc)
	filters, err := b.videoFilters()
	if err != nil {
		return nil, err
	}
	if fam == famVAAPI {
		// VAAPI encodes surfaces: scale and fps in software, then upload as NV12.
		global = []string{"-vaapi_device", b.hw.vaapiDevice()}
		filters = append(filters, "format=nv12", "hwupload")
	}
	if len(filters) > 0 {
		b.add("-vf", strings.Join(filters, ","))
	}
	if err := b.pixFmt(enc, fam); err != nil {
		return nil, err
	}
	if err := b.presetTune(enc, fam); err != nil {
		return nil, err
	}
	if err := b.rateControl(enc, fam); err != nil {
		return nil, err
	}
	x265, err := b.keyFrames(enc, fam)
	if err != nil {
		return nil, err
	}
	if fam != famNone {
		if s := tc.Slices; s != nil && *s > 0 {
			b.add("-slices", strconv.Itoa(*s))
		}
		if tc.Cores != nil {
			b.note("cores: %s has no such option; ignored", enc)
		}
	} else {
		b.hardwareOnly(enc, "")
	}
	if enc == "libx265" {
		// x265 logs at info level on its own; closed GOPs so that every key frame is an IDR a
		// segment can start with.
		b.add("-x265-params", strings.Join(append([]string{"log-level=error", "open-gop=0"}, x265...), ":"))
	}
	return global, nil
}

// hardwareOnly notes slices and cores, ignored without a hardware encoder.
func (b *builder) hardwareOnly(enc, why string) {
	if why == "" {
		why = "ignored with " + enc
	}
	if b.tc.Slices != nil {
		b.note("slices: only for hardware encoders; %s", why)
	}
	if b.tc.Cores != nil {
		b.note("cores: only for hardware encoders; %s", why)
	}
}

// videoEncoder names ffmpeg's encoder: the one asked for, the hardware one that stands for a
// mpsoc_vcu_* card, or the input's codec in software when only other video fields are set.
func (b *builder) videoEncoder(in *media.Track) (string, error) {
	switch v := b.tc.VideoTranscoding; v {
	case "libx264", "libx265":
		return v, nil
	case "mpsoc_vcu_h264":
		return b.hw.hardwareEncoder(v, "h264")
	case "mpsoc_vcu_hevc":
		return b.hw.hardwareEncoder(v, "hevc")
	case "", "Disabled":
		switch in.Codec {
		case media.CodecH264:
			return "libx264", nil
		case media.CodecH265:
			return "libx265", nil
		}
		return "", fmt.Errorf("video: %w: no encoder for input codec %s", ErrInvalid, in.Codec)
	default:
		return "", fmt.Errorf("video_transcoding %q: %w", v, ErrInvalid)
	}
}

// videoFilters returns the scale filter (aspect kept when a side is 0) and, after it, fps.
func (b *builder) videoFilters() ([]string, error) {
	tc := b.tc
	var filters []string
	if tc.FrameWidth != nil || tc.FrameHeight != nil {
		w, h := deref(tc.FrameWidth), deref(tc.FrameHeight)
		switch {
		case w < 0 || h < 0:
			return nil, fmt.Errorf("frame size %dx%d: %w: negative", w, h, ErrInvalid)
		case w == 0 && h == 0:
			return nil, fmt.Errorf("frame size 0x0: %w: frame_width and frame_height are both 0", ErrInvalid)
		case w%2 != 0 || h%2 != 0:
			return nil, fmt.Errorf("frame size %dx%d: %w: 4:2:0 video needs even sizes", w, h, ErrInvalid)
		}
		// -2 keeps the aspect ratio with an even size.
		side := func(n int) string {
			if n == 0 {
				return "-2"
			}
			return strconv.Itoa(n)
		}
		filters = append(filters, "scale="+side(w)+":"+side(h))
	}
	if f := tc.FilterFPS; f != nil {
		if math.IsNaN(*f) || math.IsInf(*f, 0) || *f <= 0 {
			return nil, fmt.Errorf("filter_fps %v: %w: must be above 0", *f, ErrInvalid)
		}
		filters = append(filters, "fps="+fmtNum(*f))
	}
	return filters, nil
}

func (b *builder) pixFmt(enc string, fam hwFamily) error {
	v := b.tc.PixFmt
	if !set(v) {
		return nil
	}
	if _, err := token("pix_fmt", v); err != nil {
		return err
	}
	if fam == famVAAPI {
		b.note("pix_fmt %s: %s uploads NV12; ignored", v, enc)
		return nil
	}
	if p, ok := planar[v]; ok && fam == famNone {
		b.note("pix_fmt %s: %s encodes it as %s", v, enc, p)
		v = p
	}
	b.add("-pix_fmt", v)
	return nil
}

// presetTune maps preset ("very fast" → veryfast) and tune to what the encoder takes.
func (b *builder) presetTune(enc string, fam hwFamily) error {
	if p := b.tc.Preset; set(p) {
		p = strings.ReplaceAll(p, " ", "")
		if _, err := token("preset", p); err != nil {
			return err
		}
		var ok bool
		switch fam {
		case famNone:
			ok = true
		case famNVENC:
			p, ok = nvencPresets[p]
		case famQSV:
			p, ok = qsvPresets[p]
		}
		if ok {
			b.add("-preset", p)
		} else {
			b.note("preset %q: %s has no match; ignored", b.tc.Preset, enc)
		}
	}
	if t := b.tc.Tune; set(t) {
		if _, err := token("tune", t); err != nil {
			return err
		}
		switch {
		case enc == "libx264", enc == "libx265" && x265Tunes[t]:
			b.add("-tune", t)
		case fam == famNVENC && t == "zerolatency":
			b.add("-tune", "ull")
		default:
			b.note("tune %q: %s has no match; ignored", t, enc)
		}
	}
	return nil
}

// rateControl maps crf and output_video_bitrate. With both, CRF is capped by the bitrate
// (-maxrate); a bitrate alone is a target with a VBV of twice its size.
func (b *builder) rateControl(enc string, fam hwFamily) error {
	tc := b.tc
	if c := tc.CRF; c != nil {
		if *c < 0 || *c > 51 {
			return fmt.Errorf("crf %d: %w: must be 0 to 51", *c, ErrInvalid)
		}
		crf := *c
		if crf == 0 && enc == "libx264" && tc.OutputVideoBitrate != nil {
			// x264's crf 0 is lossless, which ignores the cap: the best quality it caps is 1.
			b.note("crf 0: lossless cannot be capped by output_video_bitrate; libx264 uses crf 1")
			crf = 1
		}
		opt := map[hwFamily]string{famNone: "-crf", famNVENC: "-cq", famQSV: "-global_quality", famVAAPI: "-qp"}[fam]
		b.add(opt, strconv.Itoa(crf))
	}
	if r := tc.OutputVideoBitrate; r != nil {
		if *r <= 0 {
			return fmt.Errorf("output_video_bitrate %d: %w: must be above 0", *r, ErrInvalid)
		}
		if tc.CRF == nil {
			b.add("-b:v", kbps(*r))
		}
		b.add("-maxrate", kbps(*r), "-bufsize", kbps(2**r))
	}
	return nil
}

// keyFrames maps gop and force_key_frames; it returns the x265-params they need.
func (b *builder) keyFrames(enc string, fam hwFamily) (x265 []string, err error) {
	tc := b.tc
	if g := tc.GOP; g != nil {
		if *g < 1 {
			return nil, fmt.Errorf("gop %d: %w: must be at least 1", *g, ErrInvalid)
		}
		n := strconv.Itoa(*g)
		b.add("-g", n)
		// A fixed GOP: no shorter one, no extra key frame at a scene cut.
		switch enc {
		case "libx264":
			b.add("-keyint_min", n, "-sc_threshold", "0")
		case "libx265":
			x265 = append(x265, "keyint="+n, "min-keyint="+n, "scenecut=0")
		}
	}
	if keyFramesSet(tc.ForceKeyFrames) {
		expr, err := keyFrameExpr(tc.ForceKeyFrames)
		if err != nil {
			return nil, err
		}
		b.add("-force_key_frames", expr)
		// Forced key frames as IDR frames, so that a segment can start at each.
		switch fam {
		case famNone, famNVENC:
			b.add("-forced-idr", "1")
		case famQSV:
			b.add("-forced_idr", "1")
		}
	}
	return x265, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
