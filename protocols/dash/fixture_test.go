package dash

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

var fixtures pulltest.Fixtures

func TestMain(m *testing.M) { pulltest.Main(m, "dash", &fixtures) }

// fixture is a static presentation of the test source: 3 s in 1 s segments (a key frame
// each), index.mpd with init-stream0/1.m4s and chunk-stream0/1-0000N.m4s.
type fixture struct{ dir string }

// recorded returns the fixture of kind "timeline", "number" or "h265", made once per test
// binary.
func recorded(t testing.TB, kind string) *fixture {
	t.Helper()
	dir := fixtures.Record(t, kind, "index.mpd", func(string) []string {
		codec, timeline := []string{"-c:v", "libx264"}, "1"
		switch kind {
		case "number":
			timeline = "0"
		case "h265":
			codec = []string{"-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"}
		}
		args := append(append([]string{"-t", "3"}, codec...), pulltest.FixtureEncode()...)
		return append(args, "-f", "dash", "-seg_duration", "1", "-use_template", "1", "-use_timeline", timeline)
	})
	return &fixture{dir: dir}
}

// file reads a file of the fixture.
func (f *fixture) file(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
