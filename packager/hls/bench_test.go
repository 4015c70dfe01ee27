package hls

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// BenchmarkPlaylist measures rendering the playlist of 30 segments into a reused buffer.
func BenchmarkPlaylist(b *testing.B) {
	st := segtest.BenchStore(b)
	h := New(st, Options{Live: segment.Live{Window: time.Minute}})
	segtest.BenchManifest(b, st.Snapshot(), h.appendPlaylist)
}

// BenchmarkServePlaylist measures a playlist request (rendered once per segment, then cached).
func BenchmarkServePlaylist(b *testing.B) {
	h := New(segtest.BenchStore(b), Options{Live: segment.Live{Window: time.Minute}})
	req := httptest.NewRequest("GET", "/hls/p/p/index.m3u8", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
