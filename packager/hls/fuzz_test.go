package hls_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
)

// FuzzServe requests arbitrary file names and playlist queries (both come from the network):
// the handler answers 200, 206, 304, 400, 404 or 416, and never panics.
func FuzzServe(f *testing.F) {
	fx := newFixture(f, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, WaitTimeout: time.Millisecond}})
	if err := fx.Src.Feed(fx.Seg, 6500*time.Millisecond); err != nil {
		f.Fatal(err)
	}
	id := fx.Store.ID()
	for _, s := range []string{"index.m3u8", "seg_" + id + "_1.m4s", "init_" + id + "_1.mp4", "seg_" + id + "_-1.m4s",
		"seg__.m4s", "init_" + id + "_99999999999999999999.mp4", "seg_" + id + "_1_2.m4s", "x"} {
		f.Add(s, "", "")
	}
	f.Add("index.m3u8", "_HLS_msn=3", "")
	f.Add("index.m3u8", "_HLS_msn=-1", "")
	f.Add("seg_"+id+"_1.m4s", "", "bytes=5-1")
	f.Fuzz(func(t *testing.T, name, query, rng string) {
		if code := fuzzGet(t, fx.H, name, query, rng); code == 503 {
			t.Fatalf("%q ?%q: status %d", name, query, code)
		}
	})
}

// fuzzGet requests name with query and Range rng from h, and fails on a status the handler
// must never answer (503 only where a wait may time out: the caller checks).
func fuzzGet(t *testing.T, h http.Handler, name, query, rng string) int {
	req := httptest.NewRequest(http.MethodGet, "/hls/p1/p1/x", nil)
	req.URL.Path = "/hls/p1/p1/" + name
	req.URL.RawQuery = url.PathEscape(query)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	switch rec.Code {
	case 200, 206, 304, 400, 404, 416, 503:
		return rec.Code
	}
	t.Fatalf("%q ?%q: status %d", name, query, rec.Code)
	return 0
}

// FuzzServeLowLatency does the same on a low-latency player, with part names and the
// _HLS_msn, _HLS_part and _HLS_skip queries; a wait that times out answers 503.
func FuzzServeLowLatency(f *testing.F) {
	fx := newLowLatencyFixture(f, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, WaitTimeout: time.Millisecond}})
	if err := fx.Src.Feed(fx.Seg, 6500*time.Millisecond); err != nil {
		f.Fatal(err)
	}
	id := fx.Store.ID()
	for _, s := range []string{"part_" + id + "_1_0.m4s", "part_" + id + "_6_1.m4s", "part_" + id + "_6_9.m4s", "part_" + id + "_7_0.m4s",
		"part_" + id + "_1.m4s", "part_" + id + "_1_-1.m4s", "part__.m4s", "part_" + id + "_1_99999999999999999999.m4s"} {
		f.Add(s, "", "")
	}
	for _, q := range []string{"_HLS_msn=6&_HLS_part=1", "_HLS_msn=6&_HLS_part=40", "_HLS_part=1", "_HLS_msn=7&_HLS_part=0&_HLS_skip=YES",
		"_HLS_skip=YES", "_HLS_skip=v2", "_HLS_msn=1&_HLS_part=x"} {
		f.Add("index.m3u8", q, "")
	}
	f.Add("part_"+id+"_1_0.m4s", "", "bytes=5-1")
	f.Fuzz(func(t *testing.T, name, query, rng string) {
		fuzzGet(t, fx.H, name, query, rng)
		if fx.H.Blocked() != 0 {
			t.Fatalf("%q ?%q: %d requests still blocked", name, query, fx.H.Blocked())
		}
	})
}
