package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// toolTimeout bounds one run of a tool over a file of seconds of media (players that pace
// their playback take that long, and more on a loaded machine).
func toolTimeout(media time.Duration) time.Duration { return 3*media + 60*time.Second }

// run runs a tool in its own process group and returns its combined output; the group is
// killed when the timeout passes.
func run(timeout time.Duration, name string, args ...string) (string, error) {
	out, errOut, err := runSplit(timeout, name, args...)
	return out + errOut, err
}

// runSplit is run with the standard output and error apart.
func runSplit(timeout time.Duration, name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s still running after %v: %w", name, timeout, ctx.Err())
	}
	return out.String(), errOut.String(), err
}

// near reports whether got is within tol of want.
func near(got, want, tol time.Duration) bool { return got >= want-tol && got <= want+tol }

// seconds parses a decimal number of seconds.
func seconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return time.Duration(f * float64(time.Second)), err
}

// probed is what ffprobe and ffmpeg make of a file.
type probed struct {
	duration time.Duration // the container's
	video    time.Duration // the video stream's
	frames   int           // video frames decoded
	codecs   []string
}

// checkFFmpeg decodes every frame of the file with ffmpeg (which must print nothing at error
// level) and reads its durations, codecs and video frame count with ffprobe.
func checkFFmpeg(t *testing.T, path string) probed {
	t.Helper()
	if out, err := run(toolTimeout(0), "ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"); err != nil || out != "" {
		t.Errorf("ffmpeg decoding %s: %v: %s", path, err, out)
	}
	out, errOut, err := runSplit(toolTimeout(0), "ffprobe", "-v", "error", "-count_frames", "-show_entries",
		"format=duration:stream=codec_name,codec_type,duration,nb_read_frames", "-of", "json", path)
	if err != nil {
		t.Fatalf("ffprobe %s: %v: %s", path, err, errOut)
	}
	var p struct {
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
		Streams []struct {
			CodecName string `json:"codec_name"`
			CodecType string `json:"codec_type"`
			Duration  string `json:"duration"`
			Frames    string `json:"nb_read_frames"`
		} `json:"streams"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("ffprobe %s: %v: %s", path, err, out)
	}
	var r probed
	r.duration, _ = seconds(p.Format.Duration)
	for _, s := range p.Streams {
		r.codecs = append(r.codecs, s.CodecName)
		if s.CodecType == "video" {
			r.video, _ = seconds(s.Duration)
			r.frames, _ = strconv.Atoi(s.Frames)
		}
	}
	return r
}

// checkMediaInfo reads the file's duration and its tracks' formats with MediaInfo.
func checkMediaInfo(t *testing.T, path string) (time.Duration, []string) {
	t.Helper()
	out, err := run(toolTimeout(0), "mediainfo", "--Output=JSON", path)
	if err != nil {
		t.Fatalf("mediainfo %s: %v: %s", path, err, out)
	}
	var mi struct {
		Media struct {
			Track []struct {
				Type     string `json:"@type"`
				Format   string `json:"Format"`
				Duration string `json:"Duration"`
			} `json:"track"`
		} `json:"media"`
	}
	if err := json.Unmarshal([]byte(out), &mi); err != nil {
		t.Fatalf("mediainfo %s: %v: %.300s", path, err, out)
	}
	var d time.Duration
	var formats []string
	for _, tr := range mi.Media.Track {
		switch tr.Type {
		case "General":
			d, _ = seconds(tr.Duration)
		case "Video", "Audio":
			formats = append(formats, tr.Format)
		}
	}
	return d, formats
}

var discovered = regexp.MustCompile(`Duration: (\d+):(\d+):(\d+\.\d+)`)

// checkDiscoverer reads the file's duration with gst-discoverer-1.0.
func checkDiscoverer(t *testing.T, path string) time.Duration {
	t.Helper()
	out, err := run(toolTimeout(0), "gst-discoverer-1.0", path)
	m := discovered.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("gst-discoverer-1.0 %s: %v: %s", path, err, out)
	}
	h, _ := strconv.Atoi(m[1])
	mnt, _ := strconv.Atoi(m[2])
	s, _ := seconds(m[3])
	return time.Duration(h)*time.Hour + time.Duration(mnt)*time.Minute + s
}

// checkPlaybin plays the file from the start to its end with gst-launch-1.0 playbin into
// fakesinks (as fast as it decodes): it must reach EOS without an error or a warning.
func checkPlaybin(t *testing.T, path string, media time.Duration) {
	t.Helper()
	out, err := run(toolTimeout(media), "gst-launch-1.0", "playbin", "uri=file://"+path,
		"video-sink=fakesink", "audio-sink=fakesink")
	if err != nil || !strings.Contains(out, "Got EOS from element") || strings.Contains(out, "ERROR") || strings.Contains(out, "WARNING") {
		t.Errorf("gst-launch-1.0 playbin %s: %v:\n%s", path, err, out)
	}
}

// sinkBuffer is a buffer a fakesink received: its PTS, from gst-play's verbose output.
var sinkBuffer = regexp.MustCompile(`vbin/.*last-message = chain .* pts: (\d+):(\d+):(\d+\.\d+)`)

// checkGstSeek plays the file with gst-play-1.0 (playbin) from a seek to at, into fakesinks:
// the first video buffer after the seek must be within a GOP before at (accurate seeks land on
// it), the last within two frames of the end, and nothing may be reported as an error or a
// warning.
func checkGstSeek(t *testing.T, path string, at, end time.Duration) {
	t.Helper()
	out, err := run(toolTimeout(end), "gst-play-1.0", "-v", "--no-interactive", "--videosink", "fakesink silent=false",
		"--audiosink", "fakesink", "--start-position", fmt.Sprintf("%.3f", at.Seconds()), path)
	out = strings.ReplaceAll(out, "\r", "\n")
	if err != nil || !strings.Contains(out, "Reached end of play list") || strings.Contains(out, "ERROR") || strings.Contains(out, "WARNING") {
		t.Errorf("gst-play-1.0 from %v %s: %v:\n%s", at, path, err, tail(out, 40))
		return
	}
	// The video buffers after the seek follow the video sink's last flush.
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "vbin/") && strings.Contains(lines[i], "flush-stop") {
			out = strings.Join(lines[i:], "\n")
			break
		}
	}
	var pts []time.Duration
	for _, m := range sinkBuffer.FindAllStringSubmatch(out, -1) {
		h, _ := strconv.Atoi(m[1])
		mnt, _ := strconv.Atoi(m[2])
		s, _ := seconds(m[3])
		pts = append(pts, time.Duration(h)*time.Hour+time.Duration(mnt)*time.Minute+s)
	}
	if len(pts) == 0 {
		t.Errorf("gst-play-1.0 from %v %s: no video buffer after the seek:\n%s", at, path, tail(out, 40))
		return
	}
	first, last := pts[0], pts[len(pts)-1]
	if first < at-gop-frame || first > at+frame || last < end-2*frame {
		t.Errorf("gst-play-1.0 from %v %s: video from %v to %v, want from the seek to the end %v", at, path, first, last, end)
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
