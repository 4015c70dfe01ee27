package avi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// clipSeconds is the length of the test clips.
const clipSeconds = 6

// clip is a test clip demuxed into access units.
type clip struct {
	tracks   []media.Track
	units    []*media.AccessUnit
	duration float64 // what ffprobe says of the source
}

var (
	clipsMu sync.Mutex
	clips   = map[string]*clip{}
)

// makeClip encodes a clip with B-frames into MPEG-TS with ffmpeg (once per codec pair) and
// demuxes it natively.
func makeClip(t testing.TB, vcodec, acodec string) *clip {
	t.Helper()
	testutil.RequireFFmpeg(t)
	clipsMu.Lock()
	defer clipsMu.Unlock()
	key := vcodec + "+" + acodec
	if c := clips[key]; c != nil {
		return c
	}
	args := append(testutil.Pattern{Width: 320, Height: 240}.Args(),
		"-t", strconv.Itoa(clipSeconds), "-c:v", vcodec, "-g", "50", "-bf", "2", "-pix_fmt", "yuv420p")
	if vcodec == "libx264" {
		args = append(args, "-preset", "veryfast")
	} else {
		args = append(args, "-preset", "ultrafast", "-x265-params", "log-level=error:bframes=2")
	}
	path := testutil.Clip(t, "avi-"+vcodec+"-"+acodec+".ts", append(args, "-c:a", acodec, "-b:a", "96k", "-f", "mpegts")...)
	c := &clip{}
	var err error
	if c.tracks, c.units, err = mpegts.ReadFile(path); err != nil {
		t.Fatalf("demux %s: %v", key, err)
	}
	reordered := false
	for _, au := range c.units {
		reordered = reordered || (c.tracks[au.Track].Codec.IsVideo() && au.PTS != au.DTS)
	}
	if !reordered {
		t.Fatalf("clip %s has no B-frames", key)
	}
	c.duration = testutil.ProbeDuration(t, path)
	clips[key] = c
	return c
}

// videoUnits counts the video units of a clip.
func (c *clip) videoUnits() int {
	n := 0
	for _, au := range c.units {
		if c.tracks[au.Track].Codec.IsVideo() {
			n++
		}
	}
	return n
}

// writeFile writes units into a new AVI file and closes it (unless keepOpen), returning its
// path and the writer.
func writeFile(t testing.TB, c *clip, opts Options, keepOpen bool) (string, *Writer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.avi")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, c.tracks, opts)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for _, au := range c.units {
		if err := w.WriteUnit(au); err != nil {
			t.Fatalf("WriteUnit: %v", err)
		}
	}
	if !keepOpen {
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	return path, w
}

// decodeErrors decodes a whole file with ffmpeg and returns what it reported.
func decodeErrors(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out)) + ": " + err.Error()
	}
	return strings.TrimSpace(string(out))
}
