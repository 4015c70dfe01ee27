package compat

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestRecordingsPlayEverywhere (issue 19): a publisher sends the clip to an HTTP input and
// drops in the middle of a key frame; each format's recording (mp4, mov, flv, avi) and the
// memory recording's download must decode whole in ffmpeg, say their duration (what was sent
// whole, to a frame) to ffprobe, MediaInfo and GStreamer, play to their end in GStreamer from
// a seek to their middle, and in VLC from the start and from that seek.
func TestRecordingsPlayEverywhere(t *testing.T) {
	testutil.RequireFFmpeg(t)
	requireTools(t)
	c := makeCut(t)
	s := startServer(t)

	type rec struct {
		format, id string
		port       int
		memory     bool
	}
	var recs []*rec
	for _, f := range []string{"mp4", "mov", "flv", "avi", "memory"} {
		r := &rec{format: f, memory: f == "memory"}
		var ports []int
		r.id, ports = s.createOnPorts("recording", 1, func(ports []int) map[string]any {
			body := map[string]any{"recording_name": "compat-" + f, "recording_type": "RECORDING_STREAM_TO_FILE", "output_format": f,
				"input": map[string]any{"input_type": "INPUT_TYPE_HTTP_LISTEN",
					"input_stream_listen_port": map[string]any{"port": ports[0], "transport": "tcp"}}}
			if r.memory {
				body["recording_type"], body["output_format"], body["memory_duration_sec"] = "RECORDING_STREAM_TO_MEMORY", "mp4", 5
			}
			return body
		})
		r.port = ports[0]
		recs = append(recs, r)
	}
	errs := make(chan error, len(recs))
	for _, r := range recs {
		waitListening(t, r.port)
		go func() { errs <- publishHTTP(r.port, c) }()
	}
	for range recs {
		if err := <-errs; err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	t.Logf("published %d bytes (%v of video, %d frames) to each input, then dropped mid key frame", len(c.data), c.video, c.frames)

	dir := vlcDir(t)
	paths := map[string]string{}
	for _, r := range recs {
		var b []byte
		if r.memory {
			// The publisher is gone: the memory holds its last whole GOPs.
			b = s.download("/api/recording/download-memory/" + r.id)
		} else {
			var f recordedFile
			testutil.Eventually(t, 30*time.Second, r.format+" file complete", func() bool {
				fs := s.files(r.id)
				if len(fs) == 1 && fs[0].State == "complete" {
					f = fs[0]
					return true
				}
				return false
			})
			b = s.download("/api/recording/download/" + f.ID)
		}
		path := filepath.Join(dir, "compat."+r.format)
		if r.memory {
			path = filepath.Join(dir, "compat-memory.mp4")
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths[r.format] = path
	}

	for _, r := range recs {
		t.Run(r.format, func(t *testing.T) {
			t.Parallel()
			path := paths[r.format]
			p := checkFFmpeg(t, path)
			want, frames := c.video, c.frames
			if r.memory {
				// Whole GOPs of a second covering the 5 s window, the open one aside.
				want = p.video
				frames = int((want + frame/2) / frame)
				if want < 5*time.Second || want > 6*time.Second+frame {
					t.Errorf("memory: %v of video, want the 5 s window in whole GOPs", want)
				}
			}
			// FLV gives its streams no duration of their own (0 here): its frames are counted.
			if !slices.Equal(p.codecs, []string{"h264", "aac"}) || p.frames != frames || p.video != 0 && !near(p.video, want, frame) ||
				!near(p.duration, want, frame) {
				t.Errorf("ffprobe: %v, %d video frames of %v, %v in all; want h264 and aac, the %d whole frames sent (%v)",
					p.codecs, p.frames, p.video, p.duration, frames, want)
			}
			if d, formats := checkMediaInfo(t, path); !near(d, want, frame) || !slices.Equal(formats, []string{"AVC", "AAC"}) {
				t.Errorf("MediaInfo: %v of %v, want %v of AVC and AAC", d, formats, want)
			}
			if d := checkDiscoverer(t, path); !near(d, want, frame) {
				t.Errorf("gst-discoverer-1.0: %v, want %v", d, want)
			}
			checkPlaybin(t, path, want)
			mid := (want / 2).Round(time.Second) + 300*time.Millisecond // between key frames
			checkGstSeek(t, path, mid, want)
			checkVLC(t, path, mid, want)
			if r.format == "flv" {
				checkFLVIndex(t, path, want)
			}
			if !t.Failed() {
				t.Logf("%s: %v, %d frames: ffprobe, MediaInfo, GStreamer and VLC agree", r.format, want, frames)
			}
		})
	}
}

var flvIndexEntry = regexp.MustCompile(`keyframe filepositions = (\d+) times = (\d+)`)

// checkFLVIndex reads the key frame index of an FLV file's onMetaData as ffmpeg does (VLC
// plays FLV through it): a key frame a second, from the start to the last one sent, each at
// a tag ffmpeg reads.
func checkFLVIndex(t *testing.T, path string, end time.Duration) {
	t.Helper()
	out, err := run(toolTimeout(0), "ffprobe", "-v", "trace", "-show_entries", "format=duration", path)
	if err != nil {
		t.Fatalf("ffprobe -v trace %s: %v", path, err)
	}
	var times []time.Duration
	for _, m := range flvIndexEntry.FindAllStringSubmatch(out, -1) {
		ms, _ := strconv.Atoi(m[2])
		if d := time.Duration(ms) * time.Millisecond; len(times) == 0 || d > times[len(times)-1] {
			times = append(times, d)
		}
	}
	want := int(end / gop) // key frames at 0 .. end-1 s
	if len(times) != want || times[0] != 0 || times[len(times)-1] != time.Duration(want-1)*gop {
		t.Errorf("FLV index read by ffmpeg: key frames at %v, want one a second from 0 to %v", times, time.Duration(want-1)*gop)
	}
}
