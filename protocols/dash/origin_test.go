package dash

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/internal/livepull"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// What origins serve that the plain fixtures do not: redirected reloads, missing segments, a
// clock off this server's.

// dynamicMPD turns a fixture's static MPD into a dynamic one that started at ast and is
// reloaded every 500 ms.
func dynamicMPD(static string, ast time.Time) string {
	return strings.Replace(strings.Replace(static, `type="static"`,
		`type="dynamic" availabilityStartTime="`+ast.UTC().Format(time.RFC3339Nano)+`" minimumUpdatePeriod="PT0.5S"`, 1),
		`mediaPresentationDuration="PT3.0S"`, "", 1)
}

// TestPullReloadsAfterRedirect: after a permanent redirect (301, 308) of a dynamic MPD, its
// reloads go to the new URL; after a temporary one (302, 307) they keep asking the URL first
// given (RFC 9110 15.4). Either way its URIs resolve against where it came from.
func TestPullReloadsAfterRedirect(t *testing.T) {
	t.Parallel()
	f := recorded(t, "timeline")
	static := string(f.file(t, "index.mpd"))
	for _, code := range []int{http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			permanent := code == http.StatusMovedPermanently || code == http.StatusPermanentRedirect
			var a pulltest.Requests
			files := http.StripPrefix("/new/", http.FileServer(http.Dir(f.dir)))
			start := time.Now()
			live := dynamicMPD(static, start)
			srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/old/index.mpd":
					http.Redirect(w, r, "/new/index.mpd", code)
				case "/new/index.mpd": // live for 2.5 s, then ended
					if time.Since(start) < 2500*time.Millisecond {
						_, _ = w.Write([]byte(live))
					} else {
						_, _ = w.Write([]byte(static))
					}
				default:
					files.ServeHTTP(w, r)
				}
			}))
			defer srv.Close()
			pulltest.Play(t, pullURL, srv.URL+"/old/index.mpd", "moved")
			old, moved := a.Count("/old/index.mpd"), a.Count("/new/index.mpd")
			if a.Count("/new/chunk-stream") == 0 || moved < 3 {
				t.Fatalf("asked %v, want segments below /new/ and reloads", &a)
			}
			if permanent && old != 1 {
				t.Errorf("after a %d the old URL was asked %d times (the new one %d), want once", code, old, moved)
			}
			if !permanent && old != moved {
				t.Errorf("after a %d the old URL was asked %d times, the new one %d: want every reload at the old", code, old, moved)
			}
		})
	}
}

// TestPullMissingSegment: a listed segment that answers 404 for good is asked for a few times
// (three, over its duration), then skipped: the pull goes on with the next segment after a
// discontinuity (the timeline continues across the hole) and ends normally. With a
// SegmentTimeline ($Number$ and $Time$ templates) and with $Number$ by duration.
func TestPullMissingSegment(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"timeline", "time", "number"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := recorded(t, strings.Replace(kind, "time", "timeline", 1))
			mpd := string(f.file(t, "index.mpd"))
			missing := []string{"/chunk-stream0-00002.m4s", "/chunk-stream1-00002.m4s"}
			byTime := map[string]string{} // $Time$ path → the fixture's file
			if kind == "time" {
				m, err := parseManifest([]byte(mpd), mustURL("http://origin/"), time.Now())
				if err != nil {
					t.Fatal(err)
				}
				missing = missing[:0]
				for _, r := range []*rep{m.periods[0].video, m.periods[0].audio} {
					for _, sg := range r.timeline {
						path := fmt.Sprintf("/t/%s/%d.m4s", r.id, sg.t)
						byTime[path] = fmt.Sprintf("/chunk-stream%s-%05d.m4s", r.id, sg.n)
						if sg.n == 2 {
							missing = append(missing, path)
						}
					}
				}
				mpd = strings.ReplaceAll(mpd, "chunk-stream$RepresentationID$-$Number%05d$.m4s", "t/$RepresentationID$/$Time$.m4s")
			}
			var a pulltest.Requests
			files := http.FileServer(http.Dir(f.dir))
			srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/index.mpd":
					_, _ = w.Write([]byte(mpd))
				case r.URL.Path == missing[0] || r.URL.Path == missing[1]:
					http.NotFound(w, r)
				case byTime[r.URL.Path] != "":
					r.URL.Path = byTime[r.URL.Path]
					files.ServeHTTP(w, r)
				default:
					files.ServeHTTP(w, r)
				}
			}))
			defer srv.Close()
			_, s, aus := pulltest.Play(t, pullURL, srv.URL+"/index.mpd", "missing")
			for _, p := range missing {
				if n := a.Count(p); n < livepull.MissingTries || n > livepull.MissingTries+2 {
					t.Fatalf("%s asked %d times, want %d or a little more (asked %v)", p, n, livepull.MissingTries, &a)
				}
			}
			// Two segments of 25 frames; the discontinuity closes the hole of the third.
			first, last, n := pulltest.VideoSpan(s.Tracks(), aus)
			if n != 50 || last-first > 55*3600 {
				t.Fatalf("%d video units over %d ticks, want 50 over about 49 frames (asked %v)", n, last-first, &a)
			}
		})
	}
}
