package avi

import (
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// codecCases are the codec pairs written and checked with ffprobe and ffmpeg.
var codecCases = []struct {
	vcodec, acodec string
	probeV, probeA string
}{
	{"libx264", "aac", "h264", "aac"},
	{"libx265", "aac", "hevc", "aac"},
	{"libx264", "libmp3lame", "h264", "mp3"},
}

// checkFile asserts that ffprobe finds the clip's codecs, size, every video frame and a
// duration within 0.2 s of the clip's, and that ffmpeg decodes it without an error.
func checkFile(t *testing.T, c *clip, path, probeV, probeA string) {
	t.Helper()
	p := testutil.FFprobe(t, path, true)
	if len(p.Streams) != 2 || p.Streams[0].CodecName != probeV || p.Streams[1].CodecName != probeA {
		t.Fatalf("ffprobe streams %+v, want %s and %s", p.Streams, probeV, probeA)
	}
	if s := p.Streams[0]; s.Width != 320 || s.Height != 240 || s.NbFrames != strconv.Itoa(c.videoUnits()) {
		t.Errorf("video %dx%d with %s frames, want 320x240 with %d", s.Width, s.Height, s.NbFrames, c.videoUnits())
	}
	d := testutil.ProbeDuration(t, path)
	if math.Abs(d-c.duration) > 0.2 {
		t.Errorf("duration %.3f s, clip %.3f s", d, c.duration)
	}
	if msg := decodeErrors(t, path); msg != "" {
		t.Errorf("ffmpeg decoding %s: %s", path, msg)
	}
	t.Logf("%s+%s: %.3f s (clip %.3f s), %s video frames", probeV, probeA, d, c.duration, p.Streams[0].NbFrames)
}

func TestWriteFFmpeg(t *testing.T) {
	for _, tc := range codecCases {
		t.Run(tc.vcodec+"+"+tc.acodec, func(t *testing.T) {
			c := makeClip(t, tc.vcodec, tc.acodec)
			path, w := writeFile(t, c, Options{}, false)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if w.Size() != st.Size() {
				t.Errorf("Size() %d, file %d bytes", w.Size(), st.Size())
			}
			if d := w.Duration().Seconds(); math.Abs(d-c.duration) > 0.2 {
				t.Errorf("Duration() %.3f s, clip %.3f s", d, c.duration)
			}
			checkFile(t, c, path, tc.probeV, tc.probeA)
		})
	}
}

// TestOpenDML writes the clip in RIFF segments of 64 KiB: the AVIX segments, their ix##
// indexes and the super indexes must let ffmpeg read every frame.
func TestOpenDML(t *testing.T) {
	for _, tc := range codecCases {
		t.Run(tc.vcodec+"+"+tc.acodec, func(t *testing.T) {
			c := makeClip(t, tc.vcodec, tc.acodec)
			path, _ := writeFile(t, c, Options{RIFFLimit: minRIFFLimit}, false)
			segs := segments(t, path)
			if len(segs) < 3 {
				t.Fatalf("%d RIFF segments, want several", len(segs))
			}
			for k, sg := range segs {
				if k > 0 && sg.riff-segs[k-1].riff > minRIFFLimit {
					t.Errorf("segment %d is %d bytes, over the limit", k-1, sg.riff-segs[k-1].riff)
				}
			}
			t.Logf("%d segments", len(segs))
			checkFile(t, c, path, tc.probeV, tc.probeA)
		})
	}
}

// segments scans a file's RIFF segments.
func segments(t *testing.T, path string) []segmentInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	lay, _, movi, err := readLayout(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	res, err := scanMovi(f, st.Size(), movi, &lay)
	if err != nil {
		t.Fatal(err)
	}
	return res.segs
}

// TestPlainReader checks that a reader without OpenDML support (ffmpeg told to ignore the
// super index) still finds the first RIFF through idx1.
func TestPlainReader(t *testing.T) {
	c := makeClip(t, "libx264", "aac")
	path, _ := writeFile(t, c, Options{}, false)
	out, err := exec.Command("ffprobe", "-v", "error", "-use_odml", "0", "-count_frames",
		"-select_streams", "v", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe -use_odml 0: %v: %s", err, out)
	}
	if got := string(out); got != strconv.Itoa(c.videoUnits())+"\n" {
		t.Errorf("without OpenDML ffprobe reads %q video frames, want %d", got, c.videoUnits())
	}
}
