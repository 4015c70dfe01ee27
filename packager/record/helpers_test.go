package record

import (
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
	tracks, aus, err := mpegts.ReadFile(path)
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	return tracks, aus
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
