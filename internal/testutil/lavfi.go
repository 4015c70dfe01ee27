package testutil

import "fmt"

// Pattern is ffmpeg's generated test input: testsrc2 video (a moving pattern with a clock)
// and, unless Silent, a sine tone. The zero value is 640x360 at 25 fps with a 440 Hz tone at
// 48 kHz, read as fast as ffmpeg can.
type Pattern struct {
	// Width and Height of the video, pixels. Default 640x360.
	Width, Height int
	// FPS is the video frame rate. Default 25.
	FPS int
	// ToneHz is the sine's frequency, Hz. Default 440.
	ToneHz int
	// SampleRate of the tone, Hz. Default 48000.
	SampleRate int
	// Realtime reads each input at its native rate (ffmpeg -re), as a live source.
	Realtime bool
	// Silent leaves the tone out: video only.
	Silent bool
}

// Args returns the ffmpeg input arguments of the pattern: -f lavfi -i testsrc2=…, then the
// tone's; each preceded by -re when Realtime.
func (p Pattern) Args() []string {
	w, h, fps := or(p.Width, 640), or(p.Height, 360), or(p.FPS, 25)
	var args []string
	input := func(src string) {
		if p.Realtime {
			args = append(args, "-re")
		}
		args = append(args, "-f", "lavfi", "-i", src)
	}
	input(fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", w, h, fps))
	if !p.Silent {
		input(fmt.Sprintf("sine=frequency=%d:sample_rate=%d", or(p.ToneHz, 440), or(p.SampleRate, 48000)))
	}
	return args
}

// or is v, or def when v is 0.
func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
