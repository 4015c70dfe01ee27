package hls

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

var fixtures pulltest.Fixtures

func TestMain(m *testing.M) { pulltest.Main(m, "hls", &fixtures) }

// fixture is a recording of the test source cut into 1 s segments (a key frame each), as a
// VOD playlist: seg0…seg5, and init.mp4 for fMP4.
type fixture struct {
	dir   string
	ext   string // "ts" or "m4s"
	count int
}

// recorded returns the 6-segment fixture of kind "ts", "fmp4" or "fmp4-h265", made once per
// test binary.
func recorded(t testing.TB, kind string) *fixture {
	t.Helper()
	f := &fixture{ext: "ts", count: 6}
	fmp4 := strings.HasPrefix(kind, "fmp4")
	if fmp4 {
		f.ext = "m4s"
	}
	f.dir = fixtures.Record(t, kind, "vod.m3u8", func(dir string) []string {
		codec := []string{"-c:v", "libx264"}
		if kind == "fmp4-h265" {
			codec = []string{"-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"}
		}
		args := append(append([]string{"-t", "6"}, codec...), pulltest.FixtureEncode()...)
		args = append(args, "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod")
		if fmp4 {
			args = append(args, "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4")
		}
		return append(args, "-hls_segment_filename", filepath.Join(dir, "seg%d."+f.ext))
	})
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
	return pulltest.Serve(t, f.dir, map[string]func() string{"/live.m3u8": playlist})
}
