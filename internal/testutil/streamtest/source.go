package streamtest

import (
	"strconv"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// PacedSource returns ffmpeg's input and encoding arguments for a paced (-re) test pattern of
// width×height at 25 fps, encoded with codec (libx264 at constant bitrate, or libx265 tagged
// hvc1) at videoKbps with a key frame every 2 s, and AAC at audioKbps.
func PacedSource(codec string, width, height, videoKbps, audioKbps int) []string {
	b := strconv.Itoa(videoKbps) + "k"
	a := append(testutil.Pattern{Width: width, Height: height, Realtime: true}.Args(),
		"-c:v", codec, "-preset", "ultrafast", "-pix_fmt", "yuv420p",
		"-b:v", b, "-maxrate", b, "-bufsize", strconv.Itoa(videoKbps/2)+"k",
		"-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", strconv.Itoa(audioKbps)+"k")
	if codec == "libx264" {
		a = append(a, "-tune", "zerolatency", "-minrate", b, "-x264-params", "nal-hrd=cbr")
	} else {
		a = append(a, "-tag:v", "hvc1", "-x265-params", "log-level=error")
	}
	return a
}
