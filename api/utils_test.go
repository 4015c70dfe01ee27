package api

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func TestUtilities(t *testing.T) {
	e := newEnv(t)
	e.utils.stat = map[string]any{"cpuUsage": 12.5, "RAM": map[string]any{"totalMemMb": 1024}, "drive": map[string]any{"totalGb": "100.00"}}
	res := e.post("/api/utils/getStat", nil)
	if res.code != http.StatusOK || res.obj()["cpuUsage"] != 12.5 || res.obj()["drive"].(map[string]any)["totalGb"] != "100.00" {
		t.Fatalf("getStat %d %s", res.code, res.raw)
	}
	res = e.post("/api/utils/speedtest", nil)
	if res.code != http.StatusOK || res.obj()["timestamp"] != "2026-11-21T13:02:03.123Z" {
		t.Fatalf("speedtest %d %s", res.code, res.raw)
	}
	e.utils.speedErr = fmt.Errorf("speed test: no target; set SLUICE_SPEEDTEST_URL: %w", ErrNotAvailable)
	res = e.post("/api/utils/speedtest", nil)
	wantErr(t, res, http.StatusServiceUnavailable, CodeUnavailable, "")
	e.utils.ports = []storage.PortKey{{Port: 9000, Transport: "UDP"}, {Port: 8080, Transport: "TCP"}}
	for _, p := range []string{"/api/utils/getListeningPorts", "/api/utils/getUsedPorts"} {
		res = e.post(p, nil)
		got := res.arr()
		if res.code != http.StatusOK || len(got) != 2 || got[0].(map[string]any)["port"] != 8080.0 || got[1].(map[string]any)["transport"] != "UDP" {
			t.Fatalf("%s %d %s", p, res.code, res.raw)
		}
	}
}

func TestUtilitiesMissing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Utils = nil })
	for _, p := range []string{"/api/utils/getStat", "/api/utils/speedtest", "/api/utils/getListeningPorts", "/api/utils/getUsedPorts"} {
		wantErr(t, e.post(p, nil), http.StatusServiceUnavailable, CodeUnavailable, "")
	}
}

func TestPorts(t *testing.T) {
	e := newEnv(t)
	vod := e.mustCreate("vod", playerBody("lobby", 8000))
	srt := e.mustCreate("srt-servers", srtServerBody("s", 9000))
	res := e.post("/api/ports/getAll", map[string]any{"sort": map[string]any{"port": -1}})
	got := res.arr()
	if res.code != http.StatusOK || len(got) != 3 {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	first := got[0].(map[string]any)
	if first["port"] != 9000.0 || first["transport"] != "UDP" || first["module_name"] != "MODULE_SRT_SERVERS" ||
		first["entity_id"] != srt || first["entity_name"] != "s" || !storage.ValidID(first["id"].(string)) {
		t.Fatalf("claim %v", first)
	}
	wantDate(t, first["created"])
	res = e.post("/api/ports/getAll", map[string]any{"filter": map[string]any{"entity_id": vod}, "limit": 1})
	if len(res.arr()) != 1 {
		t.Fatalf("%s", res.raw)
	}
	if c := e.post("/api/ports/getCount", map[string]any{"filter": map[string]any{"module_name": "MODULE_VOD"}}).obj()["count"]; c != 2.0 {
		t.Fatalf("count %v", c)
	}
}

func TestHealthzAndPlayback(t *testing.T) {
	ready := false
	e := newEnv(t, func(c *Config) { c.Ready = func() bool { return ready } })
	wantErr(t, e.do(http.MethodGet, "/healthz", nil, noToken), http.StatusServiceUnavailable, CodeUnavailable, "")
	ready = true
	res := e.do(http.MethodGet, "/healthz", nil, noToken)
	if res.code != http.StatusOK || res.obj()["status"] != "ok" {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	wantErr(t, e.do(http.MethodGet, "/hls/a/a/index.m3u8", nil, noToken), http.StatusNotFound, CodeNotFound, "")

	e2 := newEnv(t, func(c *Config) {
		c.Playback = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			fmt.Fprint(w, "#EXTM3U "+r.URL.Path)
		})
	})
	res = e2.do(http.MethodGet, "/hls/a/a/index.m3u8", nil, noToken)
	if res.code != http.StatusOK || string(res.raw) != "#EXTM3U /hls/a/a/index.m3u8" {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	if res := e2.do(http.MethodGet, "/healthz", nil, noToken); res.code != http.StatusOK {
		t.Fatal("Ready nil must be healthy")
	}
}
