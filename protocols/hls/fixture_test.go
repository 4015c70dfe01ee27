package hls

import (
	"flag"
	"fmt"
	"github.com/sluicemedia/sluice/internal/testutil"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// fixtureRoot holds the recorded segments of the unit tests; removed when the tests end.
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hls-fixtures-")
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

// fixture is a recording of the test source cut into 1 s segments (a key frame each), as a
// VOD playlist: seg0…seg5, and init.mp4 for fMP4.
type fixture struct {
	dir   string
	ext   string // "ts" or "m4s"
	count int
	once  sync.Once
	err   error
}

// recorded returns the 6-segment fixture of kind "ts" or "fmp4", made once per test binary.
func recorded(t testing.TB, kind string) *fixture {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		testutil.RequireFFmpeg(t) // skips outside CI, fails in CI
		t.Fatalf("ffmpeg not found in PATH: install ffmpeg to run this test")
	}
	v, _ := fixtures.LoadOrStore(kind, &fixture{dir: filepath.Join(fixtureRoot, kind), ext: "ts", count: 6})
	f := v.(*fixture)
	f.once.Do(func() {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			f.err = err
			return
		}
		args := append(append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
			testutil.Pattern{Width: 320, Height: 180}.Args()...),
			"-t", "6", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
			"-b:v", "300k", "-c:a", "aac", "-b:a", "64k",
			"-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod")
		if kind == "fmp4" {
			f.ext = "m4s"
			args = append(args, "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4")
		}
		args = append(args, "-hls_segment_filename", filepath.Join(f.dir, "seg%d."+f.ext), filepath.Join(f.dir, "vod.m3u8"))
		if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
			f.err = fmt.Errorf("ffmpeg: %w: %s", err, out)
		}
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f
}

// media returns a media playlist of segments [from, to) of the fixture, each 1 s long.
func (f *fixture) media(from, to int, ended bool, extra ...string) string {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n")
	fmt.Fprintf(&b, "#EXT-X-MEDIA-SEQUENCE:%d\n", from)
	for _, x := range extra {
		b.WriteString(x + "\n")
	}
	if f.ext == "m4s" {
		b.WriteString("#EXT-X-MAP:URI=\"init.mp4\"\n")
	}
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "#EXTINF:1.000000,\nseg%d.%s\n", i, f.ext)
	}
	if ended {
		b.WriteString("#EXT-X-ENDLIST\n")
	}
	return b.String()
}

// scripted serves the fixture's files, and at /live.m3u8 whatever playlist returns.
func scripted(t testing.TB, f *fixture, playlist func() string) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(f.dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/live.m3u8" {
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			_, _ = w.Write([]byte(playlist()))
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
