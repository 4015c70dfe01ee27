package record

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// clipUnits demuxes a TS clip into its tracks and units.
func clipUnits(t testing.TB, path string) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := mpegts.NewDemuxer(f)
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatal(err)
	}
	var aus []*media.AccessUnit
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			return tracks, aus
		}
		if err != nil {
			t.Fatal(err)
		}
		aus = append(aus, au)
	}
}

// probeDuration returns the file's duration as ffprobe reports it.
func probeDuration(t testing.TB, path string) float64 {
	t.Helper()
	p := testutil.FFprobe(t, path, false)
	d, err := strconv.ParseFloat(p.Format.Duration, 64)
	if err != nil {
		t.Fatalf("ffprobe %s: duration %q", path, p.Format.Duration)
	}
	return d
}

// codecs returns the codec names ffprobe finds, in stream order.
func codecs(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	for _, s := range testutil.FFprobe(t, path, false).Streams {
		out = append(out, s.CodecName)
	}
	return out
}

// decodeErrors decodes the whole file with ffmpeg and returns what it printed at error level.
func decodeErrors(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg decode %s: %v: %s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}
