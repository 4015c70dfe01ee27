package dash_test

import (
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/sluicemedia/sluice/packager/dash"
)

// TestManifestCacheDoesNotPinSegments: once the store lets a segment go, the manifest the
// handler keeps rendered does not keep it alive.
func TestManifestCacheDoesNotPinSegments(t *testing.T) {
	f := newFixture(t, dash.Options{ID: "p1", InitialSegments: 1, Window: 4 * time.Second})
	f.feed(t, 11*time.Second)
	if r, _ := f.get(t, http.MethodGet, "index.mpd"); r.StatusCode != http.StatusOK {
		t.Fatalf("manifest: %d", r.StatusCode)
	}
	first := weak.Make(f.st.Snapshot().Segments[0])
	f.feed(t, 20*time.Second) // the first segment leaves the store; no manifest is asked for
	runtime.GC()
	if first.Value() != nil {
		t.Error("a segment the store let go is still alive")
	}
	runtime.KeepAlive(f) // the handler and its cache
}
