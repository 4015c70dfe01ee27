package player_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicemedia/sluice/internal/player"
)

// TestRouterElsewhere: in a cluster, a request for a player another node runs answers a 307 to
// the same path on that node (with CORS, never cached); a player this node runs is served here;
// one no node runs is a 404.
func TestRouterElsewhere(t *testing.T) {
	rt := player.NewRouter()
	rt.Set("here", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("#EXTM3U\n")) }))
	rt.SetElsewhere(func(_ context.Context, id string) (string, bool) {
		if id == "there" {
			return "https://node-b.example:8443", true
		}
		return "", false
	}, nil)
	for _, tc := range []struct {
		method, path string
		code         int
		location     string
	}{
		{http.MethodGet, "/hls/here/here/index.m3u8", http.StatusOK, ""},
		{http.MethodGet, "/hls/there/there/index.m3u8?_HLS_msn=4", http.StatusTemporaryRedirect, "https://node-b.example:8443/hls/there/there/index.m3u8?_HLS_msn=4"},
		{http.MethodHead, "/hls/there/", http.StatusTemporaryRedirect, "https://node-b.example:8443/hls/there/"},
		{http.MethodGet, "/hls/nowhere/nowhere/index.m3u8", http.StatusNotFound, ""},
	} {
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code || rec.Header().Get("Location") != tc.location {
			t.Errorf("%s %s: %d, Location %q; want %d, %q", tc.method, tc.path, rec.Code, rec.Header().Get("Location"), tc.code, tc.location)
		}
		if tc.code == http.StatusTemporaryRedirect {
			if rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("%s %s: redirect headers %v", tc.method, tc.path, rec.Header())
			}
		}
	}
}
