package dash

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// serveFixture serves a fixture's files, and at /multi.mpd the given MPD text.
func serveFixture(t testing.TB, f *fixture, extra string) *httptest.Server {
	t.Helper()
	return pulltest.Serve(t, f.dir, map[string]func() string{"/multi.mpd": func() string { return extra }})
}

// TestPullStatic plays static presentations once, from the start, in real time, and returns
// nil: SegmentTimeline and $Number$ addressing, H.264 and H.265.
func TestPullStatic(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"timeline", "number", "h265"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := recorded(t, kind)
			srv := serveFixture(t, f, "")
			took, s, aus := pulltest.Play(t, pullURL, srv.URL+"/index.mpd", "static")
			first, last, n := pulltest.VideoSpan(s.Tracks(), aus)
			// 3 s at 25 fps: 75 frames, from 0 to 2.96 s.
			if first != 0 || last != 74*3600 || n != 75 {
				t.Fatalf("%d video units from %d to %d", n, first, last)
			}
			if took < 2500*time.Millisecond {
				t.Fatalf("3 s played in %v: not paced", took)
			}
		})
	}
}

// TestPullPeriods plays a static MPD of two periods (the fixture twice): timestamps continue
// across the period boundary.
func TestPullPeriods(t *testing.T) {
	t.Parallel()
	f := recorded(t, "timeline")
	mpd := string(f.file(t, "index.mpd"))
	i, j := strings.Index(mpd, "<Period"), strings.Index(mpd, "</Period>")+len("</Period>")
	one := mpd[i:j]
	two := strings.Replace(strings.Replace(one, `id="0"`, `id="1"`, 1), `start="PT0.0S"`, `start="PT3S"`, 1)
	multi := mpd[:i] + strings.Replace(one, `start="PT0.0S"`, `start="PT0.0S" duration="PT3S"`, 1) + two + mpd[j:]
	multi = strings.Replace(multi, `mediaPresentationDuration="PT3.0S"`, `mediaPresentationDuration="PT6.0S"`, 1)
	srv := serveFixture(t, f, multi)
	_, s, aus := pulltest.Play(t, pullURL, srv.URL+"/multi.mpd", "periods")
	if first, last, n := pulltest.VideoSpan(s.Tracks(), aus); first != 0 || last != 149*3600 || n != 150 {
		t.Fatalf("%d video units from %d to %d, want 150 from 0 to 5.96 s", n, first, last)
	}
}

// TestPullErrors covers the failures that come at once.
func TestPullErrors(t *testing.T) {
	t.Parallel()
	f := recorded(t, "timeline")
	mpd := string(f.file(t, "index.mpd"))
	cases := []pulltest.ErrorCase{
		{Name: "not found", Text: "", Want: func(err error) bool { return strings.Contains(err.Error(), "404") }},
		{Name: "not an MPD", Text: "#EXTM3U\n", Want: func(err error) bool { return strings.Contains(err.Error(), "not an MPD") }},
		{Name: "no representation", Text: strings.ReplaceAll(strings.ReplaceAll(mpd, "avc1", "av01"), "mp4a", "ac-3"),
			Want: func(err error) bool { return errors.Is(err, errNoRepresentation) }},
		{Name: "garbage segments", Text: strings.ReplaceAll(mpd, "chunk-stream", "junk"),
			Want: func(err error) bool { return errors.Is(err, errFMP4) }},
		{Name: "missing segments", Text: strings.ReplaceAll(mpd, "chunk-stream", "gone"),
			Want: func(err error) bool { return errors.Is(err, httpget.ErrStalled) }},
		// A live presentation announced an hour ahead: a clear error at once, not a stall on
		// segments that cannot exist yet.
		{Name: "not started", Text: strings.Replace(mpdNumber, "2026-11-21T16:40:47.515Z", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 1),
			Want: func(err error) bool {
				return errors.Is(err, errNotStarted) && strings.Contains(err.Error(), "availabilityStartTime")
			}},
		{Name: "2 MB of random bytes", Text: string(pulltest.Junk(2 << 20)), Want: func(err error) bool { return err != nil }},
		{Name: "2 MB in an MPD", Text: "<MPD>" + string(pulltest.Junk(2<<20)) + "</MPD>", Want: func(err error) bool { return err != nil }},
	}
	pulltest.CheckErrors(t, pullURL, pulltest.ErrorServer{Path: "/index.mpd", JunkSize: 100000, Else: http.FileServer(http.Dir(f.dir))}, cases)
	if err := Pull(context.Background(), stream.New("e", stream.Options{}), PullOptions{URL: "file:///etc/passwd"}); err == nil {
		t.Fatal("file:// accepted")
	}
}

// TestPullCaps: an MPD or a segment over its cap ends the pull with an error that names the
// URL and the cap.
func TestPullCaps(t *testing.T) {
	const mpd = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" minBufferTime="PT2S">
	<Period id="0" start="PT0S">
		<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
			<SegmentTemplate timescale="1000" duration="1000" startNumber="1" initialization="init.mp4" media="seg$Number$.m4s"/>
			<Representation id="v" bandwidth="1000000" width="640" height="360"/>
		</AdaptationSet>
	</Period>
</MPD>`
	cfg := defaultConfig
	cfg.MaxPlaylist, cfg.MaxSegment = 1000, 5000
	pulltest.CheckCaps(t, pull, cfg, pulltest.Caps{
		BigPath: "/big.mpd", Big: mpd + strings.Repeat("<!-- padding -->\n", 100), BigWhere: "dash pull %s/big.mpd: MPD: ",
		SmallPath: "/index.mpd", Small: mpd, SegmentWhere: "segment %s/init.mp4: ",
		TooLarge: httpget.ErrTooLarge,
	})
}

// TestPullRepeat pulls a static presentation four times into one Stream: three
// discontinuities, each seen by a reader, and nothing left behind.
func TestPullRepeat(t *testing.T) {
	srv := serveFixture(t, recorded(t, "number"), "")
	pulltest.CheckRepeat(t, pullURL, srv.URL+"/index.mpd")
}

// TestPullBusy refuses a stream that already has a publisher.
func TestPullBusy(t *testing.T) {
	t.Parallel()
	srv := serveFixture(t, recorded(t, "number"), "")
	pulltest.CheckBusy(t, pullURL, srv.URL+"/index.mpd")
}

// TestPullNoSecret: the MPD's address and its segments' carry a password and a token (signed
// URLs), the origin fails: no error or log line shows them.
func TestPullNoSecret(t *testing.T) {
	t.Parallel()
	mpd := `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S">
	<Period id="0">
		<AdaptationSet mimeType="video/mp4" codecs="avc1.42c01e">
			<SegmentTemplate timescale="1000" duration="1000" startNumber="1"
				initialization="init.mp4?token=` + pulltest.SecretToken + `" media="seg$Number$.m4s?token=` + pulltest.SecretToken + `"/>
			<Representation id="v" bandwidth="1000000"/>
		</AdaptationSet>
	</Period>
</MPD>`
	pulltest.CheckNoSecret(t, pullURL, "/live.mpd", mpd)
}
