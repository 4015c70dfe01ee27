package dash

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// pullNow runs Pull to its end with a deadline.
func pullNow(t testing.TB, url string, s *stream.Stream, d time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := Pull(ctx, url, s, streamtest.Log())
	if ctx.Err() != nil {
		t.Fatalf("Pull still running after %v", d)
	}
	return time.Since(start), err
}

// serveFixture serves a fixture's files, and at /multi.mpd the given MPD text.
func serveFixture(t testing.TB, f *fixture, extra string) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(f.dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/multi.mpd" {
			_, _ = w.Write([]byte(extra))
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// videoSpan returns the first and last video DTS of a session.
func videoSpan(tracks []media.Track, aus []*media.AccessUnit) (first, last int64, n int) {
	first = -1
	for _, au := range aus {
		if tracks[au.Track].Codec.IsVideo() {
			if first < 0 {
				first = au.DTS
			}
			last = au.DTS
			n++
		}
	}
	return first, last, n
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
			s := stream.New("static", stream.Options{})
			c := streamtest.Collect(t, s)
			took, err := pullNow(t, srv.URL+"/index.mpd", s, 60*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.Stop()
			tracks, aus := s.Tracks(), c.Snapshot()
			streamtest.CheckPulled(t, tracks, aus)
			first, last, n := videoSpan(tracks, aus)
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
	s := stream.New("periods", stream.Options{})
	c := streamtest.Collect(t, s)
	if _, err := pullNow(t, srv.URL+"/multi.mpd", s, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	tracks, aus := s.Tracks(), c.Snapshot()
	streamtest.CheckPulled(t, tracks, aus)
	if first, last, n := videoSpan(tracks, aus); first != 0 || last != 149*3600 || n != 150 {
		t.Fatalf("%d video units from %d to %d, want 150 from 0 to 5.96 s", n, first, last)
	}
}

// TestPullErrors covers the failures that come at once.
func TestPullErrors(t *testing.T) {
	t.Parallel()
	f := recorded(t, "timeline")
	mpd := string(f.file(t, "index.mpd"))
	cases := []struct {
		name, mpd string
		want      func(error) bool
	}{
		{"not found", "", func(err error) bool { return strings.Contains(err.Error(), "404") }},
		{"not an MPD", "#EXTM3U\n", func(err error) bool { return strings.Contains(err.Error(), "not an MPD") }},
		{"no representation", strings.ReplaceAll(strings.ReplaceAll(mpd, "avc1", "av01"), "mp4a", "ac-3"),
			func(err error) bool { return errors.Is(err, errNoRepresentation) }},
		{"garbage segments", strings.ReplaceAll(mpd, "chunk-stream", "junk"),
			func(err error) bool { return errors.Is(err, errFMP4) }},
		{"missing segments", strings.ReplaceAll(mpd, "chunk-stream", "gone"),
			func(err error) bool { return errors.Is(err, errStalled) }},
		{"2 MB of random bytes", string(junk(2 << 20)), func(err error) bool { return err != nil }},
		{"2 MB in an MPD", "<MPD>" + string(junk(2<<20)) + "</MPD>", func(err error) bool { return err != nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := http.FileServer(http.Dir(f.dir))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/index.mpd" && tc.mpd != "":
					_, _ = w.Write([]byte(tc.mpd))
				case r.URL.Path == "/index.mpd":
					http.NotFound(w, r)
				case strings.HasPrefix(r.URL.Path, "/junk"):
					_, _ = w.Write(junk(100000))
				default:
					files.ServeHTTP(w, r)
				}
			}))
			defer srv.Close()
			took, err := pullNow(t, srv.URL+"/index.mpd", stream.New("e", stream.Options{}), 30*time.Second)
			if err == nil || !tc.want(err) {
				t.Fatalf("err %v", err)
			}
			t.Logf("%v (after %v)", err, took.Round(time.Millisecond))
		})
	}
	if err := Pull(context.Background(), "file:///etc/passwd", stream.New("e", stream.Options{}), nil); err == nil {
		t.Fatal("file:// accepted")
	}
}

// junk returns n pseudo-random bytes.
func junk(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestPullRepeat pulls a static presentation four times into one Stream: three
// discontinuities, and nothing left behind.
func TestPullRepeat(t *testing.T) {
	f := recorded(t, "number")
	srv := serveFixture(t, f, "")
	s := stream.New("repeat", stream.Options{})
	c := streamtest.Collect(t, s)
	base := testutil.TakeBaseline()
	for i := range 4 {
		if _, err := pullNow(t, srv.URL+"/index.mpd", s, 30*time.Second); err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Fatalf("%d discontinuities, want 3", d)
	}
	base.Check(t, 20*time.Second)
	c.Stop()
}

// TestPullBusy refuses a stream that already has a publisher.
func TestPullBusy(t *testing.T) {
	t.Parallel()
	f := recorded(t, "number")
	srv := serveFixture(t, f, "")
	s := stream.New("busy", stream.Options{})
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pullNow(t, srv.URL+"/index.mpd", s, 30*time.Second); !errors.Is(err, stream.ErrBusy) {
		t.Fatalf("err %v, want ErrBusy", err)
	}
}
