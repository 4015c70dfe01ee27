package hls_test

import (
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/sluicemedia/sluice/packager/hls"
)

// TestPlaylistCacheDoesNotPinSegments: once the store lets a segment go, the playlist the
// handler keeps rendered does not keep it alive.
func TestPlaylistCacheDoesNotPinSegments(t *testing.T) {
	f := newFixture(t, hls.Options{ID: "p1", InitialSegments: 1, Window: 4 * time.Second})
	f.feed(t, 11*time.Second)
	if r, _ := f.get(t, http.MethodGet, "index.m3u8"); r.StatusCode != http.StatusOK {
		t.Fatalf("playlist: %d", r.StatusCode)
	}
	first := weak.Make(f.st.Snapshot().Segments[0])
	f.feed(t, 20*time.Second) // the first segment leaves the store; no playlist is asked for
	runtime.GC()
	if first.Value() != nil {
		t.Error("a segment the store let go is still alive")
	}
	runtime.KeepAlive(f) // the handler and its cache
}
