package dash

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
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
// (three, over its duration), then skipped: the pull goes on with the next segment, its
// timestamps keeping the hole, and ends normally. With a SegmentTimeline ($Number$ and $Time$
// templates), with $Number$ by duration, and with the video's segment missing but not the
// audio's: the video stays in step with the audio.
func TestPullMissingSegment(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"timeline", "time", "number", "video only"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := recorded(t, map[string]string{"timeline": "timeline", "time": "timeline", "number": "number", "video only": "number"}[kind])
			mpd := string(f.file(t, "index.mpd"))
			missing := []string{"/chunk-stream0-00002.m4s", "/chunk-stream1-00002.m4s"}
			if kind == "video only" {
				missing[1] = missing[0]
			}
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
			srv := a.Origin(t, f.dir, "/index.mpd", mpd, func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == missing[0] || r.URL.Path == missing[1] {
					http.NotFound(w, r)
					return true
				}
				if p := byTime[r.URL.Path]; p != "" {
					r.URL.Path = p
				}
				return false
			})
			_, s, aus := pulltest.Play(t, pullURL, srv.URL+"/index.mpd", "missing")
			for _, p := range missing {
				if n := a.Count(p); n < livepull.MissingTries || n > livepull.MissingTries+2 {
					t.Fatalf("%s asked %d times, want %d or a little more (asked %v)", p, n, livepull.MissingTries, &a)
				}
			}
			// Two of three segments of 25 frames, over the three's time: the hole is kept.
			first, last, n := pulltest.VideoSpan(s.Tracks(), aus)
			if n != 50 || last-first < 72*3600 || last-first > 76*3600 {
				t.Fatalf("%d video units over %d ticks, want 50 over about 74 frames (asked %v)", n, last-first, &a)
			}
			if video, audio := pulltest.Ends(s.Tracks(), aus); kind == "video only" && (video-audio > 9000 || audio-video > 9000) {
				t.Fatalf("the video ends at %d, the audio at %d (90 kHz): out of step", video, audio)
			}
		})
	}
}

// TestPullUTCTiming: the origin's clock is an hour off this server's. A dynamic MPD addressed by
// the clock ($Number$ from availabilityStartTime) that gives the origin's time with UTCTiming
// (http-xsdate, http-iso, http-head, direct) is played from the origin's live edge: segments 2
// and 3 of the fixture, whose live MPD turns static after 2.5 s. With the local clock the edge
// is an hour off (the presentation not started, or its segments long gone). A timing source
// that answers garbage, too much or nothing is passed over for the local clock.
func TestPullUTCTiming(t *testing.T) {
	t.Parallel()
	f := recorded(t, "number")
	static := string(f.file(t, "index.mpd"))
	type tc struct {
		name    string
		skew    time.Duration // the origin's clock minus this server's
		timings string        // UTCTiming elements; %s is the origin's URL, %t its time
		plays   bool          // else fails at once: not started
	}
	cases := []tc{
		{"xsdate ahead", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="%s/time/xsdate"/>`, true},
		{"xsdate behind", -time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="%s/time/xsdate"/>`, true},
		{"iso", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="%s/time/iso"/>`, true},
		{"head", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-head:2014" value="%s/time/head"/>`, true},
		{"direct", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="%t"/>`, true},
		{"relative, after an unsupported one and a dead one", time.Hour,
			`<UTCTiming schemeIdUri="urn:mpeg:dash:utc:ntp:2014" value="pool.ntp.org"/>` +
				`<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="http://127.0.0.1:1/time time/xsdate"/>`, true},
		{"garbage", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="%s/time/garbage"/>`, false},
		{"too long", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="%s/time/long"/>`, false},
		{"unreachable", time.Hour, `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="http://127.0.0.1:1/time"/>`, false},
		{"none", time.Hour, ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var a pulltest.Requests
			files := http.FileServer(http.Dir(f.dir))
			start := time.Now()
			originNow := func() time.Time { return time.Now().Add(c.skew) }
			// On the origin's clock the presentation started 3.2 s ago: segments 1 to 3 (1 s each)
			// are out, and the pull starts 2 s (minBufferTime, two segments) back from the edge.
			ast := originNow().Add(-3200 * time.Millisecond)
			var srv *httptest.Server
			srv = httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/index.mpd":
					if time.Since(start) >= 2500*time.Millisecond {
						_, _ = w.Write([]byte(static))
						return
					}
					timings := strings.ReplaceAll(c.timings, "%s", srv.URL)
					timings = strings.ReplaceAll(timings, "%t", originNow().UTC().Format(time.RFC3339Nano))
					_, _ = w.Write([]byte(strings.Replace(dynamicMPD(static, ast), "</Period>", "</Period>"+timings, 1)))
				case "/time/xsdate":
					_, _ = w.Write([]byte(originNow().UTC().Format(time.RFC3339Nano)))
				case "/time/iso":
					_, _ = w.Write([]byte(originNow().UTC().Format("2006-01-02T15:04:05.000Z")))
				case "/time/head":
					w.Header().Set("Date", originNow().UTC().Format(http.TimeFormat))
				case "/time/garbage":
					_, _ = w.Write([]byte("yesterday at noon"))
				case "/time/long":
					_, _ = w.Write([]byte(originNow().UTC().Format(time.RFC3339Nano) + strings.Repeat(" ", 300)))
				default:
					files.ServeHTTP(w, r)
				}
			}))
			defer srv.Close()
			if !c.plays {
				_, err := pulltest.Now(t, pullURL, srv.URL+"/index.mpd", stream.New("utc", stream.Options{}), 30*time.Second)
				if !errors.Is(err, errNotStarted) {
					t.Fatalf("err %v, want the presentation not started on this server's clock", err)
				}
				return
			}
			pulltest.Play(t, pullURL, srv.URL+"/index.mpd", "utc")
			if a.Count("/chunk-stream0-00003.m4s") != 1 || a.Count("/chunk-stream0-00001.m4s") > 1 {
				t.Fatalf("asked %v, want the segments at the origin's live edge", &a)
			}
			if strings.Contains(c.timings, "/time/") && a.Count("/time/") == 0 {
				t.Fatalf("asked %v, no timing source", &a)
			}
		})
	}
}
