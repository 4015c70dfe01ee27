package dash_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
)

// FuzzServe requests arbitrary file names and ranges (they come from the network): the
// handler answers 200, 206, 404 or 416, and never panics.
func FuzzServe(f *testing.F) {
	fx := newFixture(f, dash.Options{Live: segment.Live{ID: "p1", InitialSegments: 1}})
	if err := fx.Src.Feed(fx.Seg, 6500*time.Millisecond); err != nil {
		f.Fatal(err)
	}
	id := fx.Store.ID()
	for _, s := range []string{"index.mpd", "time", "dash_" + id + "_1_0_init.mp4", "dash_" + id + "_1_1_480000.m4s",
		"dash_" + id + "_1_0_900000.m4s", "dash_" + id + "_-1_0_init.mp4", "dash____", "dash_" + id + "_1_0_9e9.m4s", "x"} {
		f.Add(s, "")
	}
	f.Add("dash_"+id+"_1_0_900000.m4s", "bytes=0-10,20-30")
	f.Fuzz(func(t *testing.T, name, rng string) {
		req := httptest.NewRequest(http.MethodGet, "/hls/p1/p1/x", nil)
		req.URL.Path = "/hls/p1/p1/" + name
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		fx.H.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 206, 404, 416:
		default:
			t.Fatalf("%q: status %d", name, rec.Code)
		}
	})
}
