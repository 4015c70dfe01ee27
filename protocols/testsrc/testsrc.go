// Package testsrc generates the test stream of INPUT_TYPE_GENERATE_TEST_VIDEO: ffmpeg encodes
// a test pattern and a sine tone into MPEG-TS at real-time pace, and the package publishes it.
package testsrc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// Defaults of Params, the spec's.
const (
	DefaultFPS         = 24
	DefaultSoundHz     = 216
	DefaultWidth       = 1920
	DefaultHeight      = 1080
	DefaultDurationSec = 3600
	DefaultBitrateKbps = 6000
)

// AudioKbps is the AAC bitrate of the test stream, in kbit/s.
const AudioKbps = 128

// Params describe the test stream. A zero field takes its default.
type Params struct {
	// FPS is the frame rate; default 24, at most 120.
	FPS int
	// SoundHz is the frequency of the sine tone in Hz; default 216, below 24000.
	SoundHz int
	// Width and Height are the picture size in pixels, even; default 1920x1080.
	Width, Height int
	// DurationSec is how long the stream lasts in seconds; default 3600.
	DurationSec int
	// BitrateKbps is the constant video bitrate in kbit/s; default 6000. Audio adds AudioKbps.
	BitrateKbps int
}

// withDefaults fills the zero fields and checks the others.
func (p Params) withDefaults() (Params, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.FPS, DefaultFPS)
	def(&p.SoundHz, DefaultSoundHz)
	def(&p.Width, DefaultWidth)
	def(&p.Height, DefaultHeight)
	def(&p.DurationSec, DefaultDurationSec)
	def(&p.BitrateKbps, DefaultBitrateKbps)
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"fps", p.FPS, 1, 120},
		{"sound frequency (Hz)", p.SoundHz, 1, 23999},
		{"width", p.Width, 16, 7680},
		{"height", p.Height, 16, 4320},
		{"duration (s)", p.DurationSec, 1, 365 * 24 * 3600},
		{"bitrate (kbit/s)", p.BitrateKbps, 50, 200000},
	} {
		if c.v < c.lo || c.v > c.hi {
			return p, fmt.Errorf("test video: %s %d out of %d-%d", c.name, c.v, c.lo, c.hi)
		}
	}
	if p.Width%2 != 0 || p.Height%2 != 0 {
		return p, fmt.Errorf("test video: size %dx%d must be even (4:2:0 chroma)", p.Width, p.Height)
	}
	return p, nil
}

// Args returns ffmpeg's arguments for the test stream: lavfi testsrc2 and a sine tone read at
// native rate (-re), cut to DurationSec; libx264 at a constant bitrate (-b:v, -minrate,
// -maxrate and a one-second -bufsize, with NAL HRD CBR filler) and a key frame every 2 s
// exactly (-g and -keyint_min at twice the frame rate, no scene-cut key frames), so that
// packagers can cut 2 s segments; AAC stereo 48 kHz at AudioKbps; MPEG-TS on stdout. The
// ultrafast preset keeps 1080p24 under half a core. Each frame is flushed to the pipe
// (-flush_packets 1), not 32 KiB blocks, for a steady arrival rate. Zero fields of p take
// their defaults; a field out of range is an error.
func Args(p Params) ([]string, error) {
	p, err := p.withDefaults()
	if err != nil {
		return nil, err
	}
	gop := strconv.Itoa(2 * p.FPS)
	rate := strconv.Itoa(p.BitrateKbps) + "k"
	return []string{
		"-nostdin", "-hide_banner", "-loglevel", "error",
		"-re", "-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", p.Width, p.Height, p.FPS),
		"-re", "-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=%d:sample_rate=48000", p.SoundHz),
		"-t", strconv.Itoa(p.DurationSec),
		"-map", "0:v", "-map", "1:a",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
		"-b:v", rate, "-minrate", rate, "-maxrate", rate, "-bufsize", rate,
		"-x264-params", "nal-hrd=cbr",
		"-g", gop, "-keyint_min", gop, "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", strconv.Itoa(AudioKbps) + "k", "-ar", "48000", "-ac", "2",
		"-f", "mpegts", "-flush_packets", "1", "pipe:1",
	}, nil
}

// Options configure Run.
type Options struct {
	// FFmpeg is the ffmpeg program to run. Default: "ffmpeg" from PATH.
	FFmpeg string
	// Params describe the stream to generate.
	Params Params
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// Run generates the test stream of o.Params with o.FFmpeg and publishes it into s, until
// ctx ends (nil: ffmpeg is stopped, its process group killed, before Run returns) or the
// stream's duration is over (nil after media flowed). It fails for invalid params, and when
// ffmpeg fails or produces nothing.
func Run(ctx context.Context, s *stream.Stream, o Options) error {
	args, err := Args(o.Params)
	if err != nil {
		return err
	}
	p, _ := o.Params.withDefaults()
	opt.Zero(&o.FFmpeg, "ffmpeg")
	opt.Zero(&o.Log, slog.Default())
	if err := ingest.RunPipe(ctx, o.FFmpeg, args, s, o.Log.With("input", "test video"), true, nil); err != nil {
		return fmt.Errorf("test video %dx%d@%d: %w", p.Width, p.Height, p.FPS, err)
	}
	return nil
}
