package dash

import (
	"flag"
	"fmt"
	"github.com/sluicemedia/sluice/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// fixtureRoot holds the recorded presentations of the unit tests; removed when the tests end.
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dash-fixtures-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureRoot = dir
	// The end-to-end tests spend their time waiting for real-time media, not on the CPU: run
	// four at a time rather than GOMAXPROCS (often 2). An explicit -parallel still wins.
	_ = flag.Set("test.parallel", "4")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

var fixtures sync.Map // kind → *fixture

// fixture is a static presentation of the test source: 3 s in 1 s segments (a key frame
// each), index.mpd with init-stream0/1.m4s and chunk-stream0/1-0000N.m4s.
type fixture struct {
	dir  string
	once sync.Once
	err  error
}

// recorded returns the fixture of kind "timeline", "number" or "h265", made once per test
// binary.
func recorded(t testing.TB, kind string) *fixture {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		testutil.RequireFFmpeg(t) // skips outside CI, fails in CI
		t.Fatalf("ffmpeg not found in PATH: install ffmpeg to run this test")
	}
	v, _ := fixtures.LoadOrStore(kind, &fixture{dir: filepath.Join(fixtureRoot, kind)})
	f := v.(*fixture)
	f.once.Do(func() {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			f.err = err
			return
		}
		codec, timeline := []string{"-c:v", "libx264"}, "1"
		switch kind {
		case "number":
			timeline = "0"
		case "h265":
			codec = []string{"-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"}
		}
		args := append(append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
			testutil.Pattern{Width: 320, Height: 180}.Args()...), "-t", "3")
		args = append(args, codec...)
		args = append(args, "-preset", "ultrafast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
			"-b:v", "300k", "-c:a", "aac", "-b:a", "64k",
			"-f", "dash", "-seg_duration", "1", "-use_template", "1", "-use_timeline", timeline,
			filepath.Join(f.dir, "index.mpd"))
		if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
			f.err = fmt.Errorf("ffmpeg: %w: %s", err, out)
		}
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f
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
