package segtest

import (
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"
)

// CheckCacheDoesNotPin checks that once the store lets a segment go, the manifest (index.m3u8 or
// index.mpd) that f's handler keeps rendered does not keep it alive. f's store should hold a
// few seconds (a 4 s window): the source is fed 11 s, the manifest asked for once, then 20 s
// more with no request.
func CheckCacheDoesNotPin(t *testing.T, f *Fixture, manifest string) {
	t.Helper()
	f.Feed(t, 11*time.Second)
	if r, _ := f.Get(t, http.MethodGet, manifest); r.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", manifest, r.StatusCode)
	}
	first := weak.Make(f.Store.Snapshot().Segments[0])
	f.Feed(t, 20*time.Second) // the first segment leaves the store; no manifest is asked for
	runtime.GC()
	if first.Value() != nil {
		t.Error("a segment the store let go is still alive")
	}
	runtime.KeepAlive(f) // the handler and its cache
}
