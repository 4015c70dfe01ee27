package transcode

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/sluicemedia/sluice/internal/media"
)

// Fixed parts of the argument list. Progress goes to a socket Job adds (-progress), so
// -nostats keeps the status line off stderr, which then carries only errors.
var (
	argsHead = []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-nostats"}
	// ffmpeg probes 5 s of input by default before it outputs anything; 1 s finds the codec
	// parameters of a stream whose key frames carry them.
	argsIn = []string{"-f", "mpegts", "-analyzeduration", "1000000", "-i", "pipe:0", "-map", "0:v?", "-map", "0:a?"}
	// -muxdelay 0 and -flush_packets 1: each TS packet reaches the pipe as soon as it is muxed.
	argsOut = []string{"-muxdelay", "0", "-flush_packets", "1", "-f", "mpegts", "pipe:1"}
)

// tokenPattern is what an enumerated value passed to ffmpeg may look like ("veryfast",
// "yuv420p10le"); the API checks the enumerations, this keeps options out of the list.
var tokenPattern = regexp.MustCompile(`^[a-z0-9]{1,32}$`)

// Args returns ffmpeg's arguments (without the program name) for transcoding an MPEG-TS of
// the tracks in, read on stdin, into an MPEG-TS on stdout, as tc asks: each field maps to
// its ffmpeg option; video and audio that no field asks to change are copied. A mpsoc_vcu_*
// codec maps to a hardware encoder in hw, else the error wraps ErrNoHardware; a value ffmpeg
// cannot take fails with ErrInvalid. Args is a pure function; Notes says what it ignored.
func Args(tc *Settings, in []media.Track, hw HW) ([]string, error) {
	b, err := build(tc, in, hw)
	if err != nil {
		return nil, err
	}
	return b.args, nil
}

// Notes returns, for the caller to log, the fields Args ignores and why ("slices: only for
// hardware encoders; ignored with libx264"). It is empty when Args fails.
func Notes(tc *Settings, in []media.Track, hw HW) []string {
	b, err := build(tc, in, hw)
	if err != nil {
		return nil
	}
	return b.notes
}

// builder collects the arguments and notes of one mapping.
type builder struct {
	tc    *Settings
	hw    HW
	args  []string
	notes []string
}

func (b *builder) add(args ...string) { b.args = append(b.args, args...) }

func (b *builder) note(format string, a ...any) { b.notes = append(b.notes, fmt.Sprintf(format, a...)) }

func build(tc *Settings, in []media.Track, hw HW) (*builder, error) {
	if tc == nil {
		tc = &Settings{}
	}
	if len(in) == 0 {
		return nil, errors.New("transcode: no input tracks to map")
	}
	var video, audio *media.Track
	for i := range in {
		switch {
		case in[i].Codec.IsVideo() && video == nil:
			video = &in[i]
		case !in[i].Codec.IsVideo() && audio == nil:
			audio = &in[i]
		}
	}
	v := &builder{tc: tc, hw: hw}
	global, err := v.video(video)
	if err != nil {
		return nil, err
	}
	a := &builder{tc: tc, hw: hw}
	if err := a.audio(audio); err != nil {
		return nil, err
	}
	b := &builder{tc: tc, hw: hw, notes: append(v.notes, a.notes...)}
	b.add(argsHead...)
	b.add(global...)
	b.add(argsIn...)
	b.add(v.args...)
	b.add(a.args...)
	b.add(argsOut...)
	return b, nil
}

// token checks an enumerated value before it reaches ffmpeg's command line.
func token(field, v string) (string, error) {
	if !tokenPattern.MatchString(v) {
		return "", fmt.Errorf("%s %q: %w", field, v, ErrInvalid)
	}
	return v, nil
}

// kbps writes a kbit/s value as ffmpeg takes it.
func kbps(n int) string { return fmt.Sprintf("%dk", n) }
