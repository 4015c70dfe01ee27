package hls_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
)

func TestHeaders(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1"}})
	f.Feed(t, 8500*time.Millisecond)
	id := f.Store.ID()
	seg := f.Store.Snapshot().Segments[1]
	for _, tc := range []struct {
		name, ctype, cache string
		size               int
	}{
		{"index.m3u8", "application/vnd.apple.mpegurl", "public, max-age=1, s-maxage=1", -1}, // half of 3 s
		{"init_" + id + "_1.mp4", "video/mp4", "public, max-age=31536000, immutable", len(seg.Init.Data)},
		{"seg_" + id + "_1.m4s", "video/mp4", "public, max-age=31536000, immutable", len(seg.Data)},
	} {
		res, body := f.Get(t, http.MethodGet, tc.name)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.name, res.StatusCode, body)
		}
		h := res.Header
		if h.Get("Content-Type") != tc.ctype || h.Get("Cache-Control") != tc.cache || h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: headers %v", tc.name, h)
		}
		if tc.size >= 0 && len(body) != tc.size {
			t.Errorf("%s: %d bytes, want %d", tc.name, len(body), tc.size)
		}
	}
	// Range requests on a segment.
	res, body := f.Get(t, http.MethodGet, "seg_"+id+"_1.m4s", "Range", "bytes=8-15")
	if res.StatusCode != http.StatusPartialContent || body != string(seg.Data[8:16]) {
		t.Errorf("range: %d %q", res.StatusCode, body)
	}
	if cr := res.Header.Get("Content-Range"); cr == "" {
		t.Error("no Content-Range")
	}
	// HEAD, preflight, other methods, unknown names and another store's names.
	if res, body := f.Get(t, http.MethodHead, "seg_"+id+"_1.m4s"); res.StatusCode != http.StatusOK || body != "" || res.ContentLength != int64(len(seg.Data)) {
		t.Errorf("HEAD: %d %d", res.StatusCode, res.ContentLength)
	}
	res, _ = f.Get(t, http.MethodOptions, "index.m3u8", "Origin", "http://example.com", "Access-Control-Request-Method", "GET")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Methods") == "" || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := f.Get(t, http.MethodPost, "index.m3u8"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", res.StatusCode)
	}
	for _, name := range []string{"seg_" + id + "_99.m4s", "seg_other_1.m4s", "init_" + id + "_7.mp4", "seg_" + id + "_x.m4s", "nothing"} {
		if res, _ := f.Get(t, http.MethodGet, name); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d", name, res.StatusCode)
		}
	}
	for name, want := range map[string]bool{"index.m3u8": true, "seg_x.m4s": true, "init_x.mp4": true, "index.mpd": false, "dash_x": false} {
		if f.H.Owns(name) != want {
			t.Errorf("Owns(%q) = %v", name, !want)
		}
	}
}
