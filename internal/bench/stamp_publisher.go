package bench

import (
	"fmt"
	"strconv"
)

// Stamp publisher picture: the bench clip's size and rate (1280x720 at 30 fps).
const (
	stampWidth  = 1280
	stampHeight = 720
	stampFPS    = 30
)

// stampEncode is the video and audio encoding of the latency publisher: the bench clip's H.264
// (High, veryfast, 3850 kbit/s CBR-like) with a key frame every second (1 s GOP) and no
// look-ahead or B-frame delay (zerolatency: a camera encoder's setting, so that the encoder adds
// no seconds of its own), and AAC 128 kbit/s.
func stampEncode() []string {
	return []string{
		"-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p", "-profile:v", "high",
		"-b:v", "3850k", "-maxrate", "3850k", "-bufsize", "3850k",
		"-g", strconv.Itoa(stampFPS), "-keyint_min", strconv.Itoa(stampFPS), "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", "128k",
	}
}

// stampSource is ffmpeg's input of the stamped picture and a tone, value being the stamp's
// expression (see StampFilter). With realtime the source makes frames at their pace rather than
// as fast as it can, so that a wall-clock value is the time the frame was made.
func stampSource(value string, realtime bool) []string {
	vf := fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", stampWidth, stampHeight, stampFPS)
	if realtime {
		vf += ",realtime"
	}
	vf += "," + StampFilter(value, stampHeight)
	return []string{"-f", "lavfi", "-i", vf, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"}
}

// wallClockStamp is the stamp expression of a live publisher: the wall clock in milliseconds.
const wallClockStamp = "floor(time(0)*1000)"

// stampPublisherArgs are the arguments of ffmpeg publishing the stamped stream live to out
// (ffmpeg output arguments, e.g. -f mpegts srt://…).
func stampPublisherArgs(out ...string) []string {
	args := append(stampSource(wallClockStamp, true), stampEncode()...)
	return append(args, out...)
}
