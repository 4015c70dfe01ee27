package dash

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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
