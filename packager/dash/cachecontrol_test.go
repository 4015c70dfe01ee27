package dash_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
)

// TestManifestCache: an HTTP cache in front may reuse a classic manifest for half a segment
// (whole seconds, "no-cache" under one) and a low-latency one for a part.
func TestManifestCache(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fragment, part time.Duration
		want           string
	}{
		{time.Second, 0, "no-cache"},
		{3 * time.Second, 0, "public, max-age=1, s-maxage=1"},
		{6 * time.Second, 0, "public, max-age=3, s-maxage=3"},
		{2 * time.Second, 500 * time.Millisecond, "no-cache"},
		{4 * time.Second, time.Second, "public, max-age=1, s-maxage=1"},
	} {
		f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", FragmentSize: tc.fragment, PartTarget: tc.part}})
		f.Feed(t, 10*time.Second)
		res, body := f.Get(t, http.MethodGet, "index.mpd")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != tc.want {
			t.Errorf("fragment %v part %v: %d %q, want %q (%.200s)", tc.fragment, tc.part, res.StatusCode, res.Header.Get("Cache-Control"), tc.want, body)
		}
	}
}
