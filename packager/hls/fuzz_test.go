package hls_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
)

// FuzzServe requests arbitrary file names and playlist queries (both come from the network):
// the handler answers 200, 206, 304, 400, 404 or 416, and never panics.
func FuzzServe(f *testing.F) {
	fx := newFixture(f, hls.Options{ID: "p1", InitialSegments: 1, BlockTimeout: time.Millisecond})
	if err := fx.src.Feed(fx.sg, 6500*time.Millisecond); err != nil {
		f.Fatal(err)
	}
	id := fx.st.ID()
	for _, s := range []string{"index.m3u8", "seg_" + id + "_1.m4s", "init_" + id + "_1.mp4", "seg_" + id + "_-1.m4s",
		"seg__.m4s", "init_" + id + "_99999999999999999999.mp4", "seg_" + id + "_1_2.m4s", "x"} {
		f.Add(s, "", "")
	}
	f.Add("index.m3u8", "_HLS_msn=3", "")
	f.Add("index.m3u8", "_HLS_msn=-1", "")
	f.Add("seg_"+id+"_1.m4s", "", "bytes=5-1")
	f.Fuzz(func(t *testing.T, name, query, rng string) {
		req := httptest.NewRequest(http.MethodGet, "/hls/p1/p1/x", nil)
		req.URL.Path = "/hls/p1/p1/" + name
		req.URL.RawQuery = url.PathEscape(query)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 206, 304, 400, 404, 416:
		default:
			t.Fatalf("%q ?%q: status %d", name, query, rec.Code)
		}
	})
}
