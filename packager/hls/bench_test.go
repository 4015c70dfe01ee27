package hls

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// benchStore returns a store holding a 60 s window of 2 s segments (30 listed, 2 grace).
func benchStore(b *testing.B) *segment.Store {
	st := segment.NewStore(segment.StoreOptions{Window: time.Minute})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: slog.New(slog.DiscardHandler)})
	src := segtest.NewSource(50, time.Now())
	_ = sg.SetTracks(src.Tracks())
	if err := src.Feed(sg, 90*time.Second); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkPlaylist measures rendering the playlist of 30 segments into a reused buffer.
func BenchmarkPlaylist(b *testing.B) {
	st := benchStore(b)
	h := New(st, Options{Window: time.Minute})
	win := st.Snapshot()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = h.appendPlaylist(buf[:0], win)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkServePlaylist measures a playlist request (rendered once per segment, then cached).
func BenchmarkServePlaylist(b *testing.B) {
	h := New(benchStore(b), Options{Window: time.Minute})
	req := httptest.NewRequest("GET", "/hls/p/p/index.m3u8", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
