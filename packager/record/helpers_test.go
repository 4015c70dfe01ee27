package record

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// newFileWriter creates a file of the format in the test's temporary folder (closed when the
// test ends) and a Writer of tracks into it.
func newFileWriter(t testing.TB, format string, tracks []media.Track) (Writer, *os.File) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "rec."+format))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	w, err := NewWriter(format, f, tracks)
	if err != nil {
		t.Fatal(err)
	}
	return w, f
}

// writeUnits records aus into a new file of the format (newFileWriter), closes the writer when
// close (its Size must then be the file's), and returns the file's path and the writer.
func writeUnits(t testing.TB, format string, tracks []media.Track, aus []*media.AccessUnit, close bool) (string, Writer) {
	t.Helper()
	w, f := newFileWriter(t, format, tracks)
	for _, au := range aus {
		if err := w.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	if close {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := f.Stat()
	if w.Size() != st.Size() && close {
		t.Errorf("Size() = %d, file has %d bytes", w.Size(), st.Size())
	}
	return f.Name(), w
}

// clipUnits demuxes a TS clip into its tracks and units.
func clipUnits(t testing.TB, path string) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	tracks, aus, err := mpegts.ReadFile(path)
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	return tracks, aus
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

// writeSessions writes n publisher sessions of aus into m, each continuing the timeline.
func writeSessions(m *Memory, tracks []media.Track, aus []*media.AccessUnit, n int) error {
	for range n {
		if err := m.SetTracks(tracks); err != nil {
			return err
		}
		for _, au := range aus {
			if err := m.Write(au); err != nil {
				return err
			}
		}
	}
	return nil
}

// memoryMP4 reads what m holds as one file (Memory.Open); nil when it holds nothing.
func memoryMP4(t testing.TB, m *Memory) []byte {
	t.Helper()
	f := m.Open()
	if f == nil {
		return nil
	}
	return readAll(t, f)
}
