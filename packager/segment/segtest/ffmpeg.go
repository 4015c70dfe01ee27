package segtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/packager/segment"
)

// Clip sizes made by MakeTS.
const (
	ClipWidth   = 640
	ClipHeight  = 360
	ClipSeconds = 12
)

// MakeTS returns an MPEG-TS file of ClipSeconds seconds made by ffmpeg: 640x360 at 25 fps
// with a key frame every 2 s and B-frames, and 48 kHz audio. codec is "h264" or "h265" (with
// AAC), or "h264-mp3" or "h264-opus". The file is cached in the temporary directory across
// test packages. It skips the test when ffmpeg is missing (testutil.RequireFFmpeg).
func MakeTS(t testing.TB, codec string) string {
	t.Helper()
	testutil.RequireFFmpeg(t)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("sluice-segtest-%s-%ds-v1.ts", codec, ClipSeconds))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	video := []string{"-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0"}
	if codec == "h265" {
		video = []string{"-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1",
			"-x265-params", "keyint=50:min-keyint=50:scenecut=0:bframes=2:log-level=error"}
	}
	args := append(testutil.Pattern{Width: ClipWidth, Height: ClipHeight}.Args(),
		"-t", fmt.Sprint(ClipSeconds), "-pix_fmt", "yuv420p")
	args = append(args, video...)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	audio := []string{"-c:a", "aac", "-b:a", "64k"}
	switch codec {
	case "h264-mp3":
		audio = []string{"-c:a", "libmp3lame", "-b:a", "96k"}
	case "h264-opus":
		audio = []string{"-c:a", "libopus", "-b:a", "64k"}
	}
	args = append(append(args, audio...), "-f", "mpegts", tmp)
	if err := testutil.FFmpeg(t, args...).Wait(5 * time.Minute); err != nil {
		t.Fatalf("make %s clip: %v", codec, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// FeedTS demuxes the TS file and writes its units to each segmenter, with arrival times that
// follow the DTS from wall, then flushes them. It returns the tracks.
func FeedTS(t testing.TB, path string, wall time.Time, sgs ...*segment.Segmenter) []media.Track {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := mpegts.NewDemuxer(f)
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	for _, sg := range sgs {
		if err := sg.SetTracks(tracks); err != nil {
			t.Fatal(err)
		}
	}
	first := int64(-1)
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("demux %s: %v", path, err)
		}
		dts := media.Rescale(au.DTS, tracks[au.Track].ClockRate, 90000)
		if first < 0 {
			first = dts
		}
		au.Arrival = wall.Add(time.Duration(dts-first) * time.Second / 90000)
		for _, sg := range sgs {
			if err := sg.WriteUnit(au); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, sg := range sgs {
		if err := sg.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return tracks
}
