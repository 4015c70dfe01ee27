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

// stampSource is ffmpeg's input of the stamped picture and a tone. value is the stamp's
// expression of the frame's timestamp t (see StampFilter); with live, the source instead makes
// frames at their pace (realtime) and stamps each with the wall clock as it leaves that filter.
//
// The live stamp is read once per frame: setpts sets the frame's timestamp to the wall clock
// (RTCTIME, in a 1 ms time base), every block of the stamp draws from that same t, and the
// timestamps are then put back to 30 a second for the encoder. Reading the clock in each block
// (time(0)) would let the blocks of one frame straddle a millisecond, which the parity rejects.
func stampSource(value string, live bool) []string {
	vf := fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", stampWidth, stampHeight, stampFPS)
	if live {
		vf += ",realtime,settb=1/1000,setpts=RTCTIME/1000," + StampFilter(liveStamp, stampHeight) +
			fmt.Sprintf(",settb=1/%d,setpts=N", stampFPS)
	} else {
		vf += "," + StampFilter(value, stampHeight)
	}
	return []string{"-f", "lavfi", "-i", vf, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"}
}

// liveStamp is the stamp expression of the live publisher: its timestamps are the wall clock in
// milliseconds (see stampSource).
const liveStamp = "round(t*1000)"

// stampPublisherArgs are the arguments of ffmpeg publishing the stamped stream live to out
// (ffmpeg output arguments, e.g. -f mpegts srt://…).
func stampPublisherArgs(out ...string) []string {
	args := append(stampSource("", true), stampEncode()...)
	return append(args, out...)
}
