package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func TestVodCreateAndRead(t *testing.T) {
	e := newEnv(t)
	res := e.post("/api/vod/create", playerBody("lobby", 8000))
	if res.code != http.StatusCreated {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	m := res.obj()
	id, _ := m["id"].(string)
	if m["success"] != true || !storage.ValidID(id) || m["created"] != "2026-11-21T14:02:03.123Z" {
		t.Fatalf("create answer %s", res.raw)
	}
	if got := e.procs.took(); !slices.Equal(got, []string{"check MODULE_VOD", "start MODULE_VOD " + id}) {
		t.Fatalf("procs calls %v", got)
	}
	p := e.getByID("vod", id)
	if p["id"] != id || p["_id"] != id || p["vod_name"] != "lobby" || p["vod_port"] != 8000.0 || p["active"] != true {
		t.Fatalf("record %v", p)
	}
	for _, k := range []string{"created", "modified", "state_since"} {
		wantDate(t, p[k])
	}
	if p["state"] != "stopped" || p["last_error"] != "" || p["restarts"] != 0.0 {
		t.Fatalf("state fields %v", p)
	}
	wantURL := "http://example.com:8000/hls/" + id + "/" + id + "/index"
	if p["hls_url"] != wantURL+".m3u8" || p["dash_url"] != wantURL+".mpd" {
		t.Fatalf("playlist urls %v %v", p["hls_url"], p["dash_url"])
	}
	in := p["input"].(map[string]any)
	lp := in["input_stream_listen_port"].(map[string]any)
	if lp["transport"] != "TCP" || lp["port"] != 8001.0 {
		t.Fatalf("listen port %v", lp)
	}
	if p["user_id"] == "" || p["user_id"] == nil {
		t.Fatalf("user_id missing: %v", p)
	}
}

// A classic player's record has no low-latency fields; a low-latency one gets the default
// part duration, or keeps the one given; an update can turn low latency on.
func TestVodLowLatencyFields(t *testing.T) {
	e := newEnv(t)
	classic := e.getByID("vod", e.mustCreate("vod", playerBody("classic", 8000)))
	if _, ok := classic["low_latency"]; ok {
		t.Fatalf("classic record has low_latency: %v", classic)
	}
	if _, ok := classic["part_duration_ms"]; ok {
		t.Fatalf("classic record has part_duration_ms: %v", classic)
	}
	ll := e.getByID("vod", e.mustCreate("vod", merge(playerBody("ll", 8100), map[string]any{"low_latency": true})))
	if ll["low_latency"] != true || ll["part_duration_ms"] != 333.0 {
		t.Fatalf("low-latency record %v %v", ll["low_latency"], ll["part_duration_ms"])
	}
	given := e.getByID("vod", e.mustCreate("vod", merge(playerBody("ll2", 8200), map[string]any{"low_latency": true, "part_duration_ms": "200"})))
	if given["part_duration_ms"] != 200.0 {
		t.Fatalf("part_duration_ms %v", given["part_duration_ms"])
	}
	wantSuccess(t, e.post("/api/vod/update", map[string]any{"id": classic["id"], "low_latency": true}))
	up := e.getByID("vod", classic["id"].(string))
	if up["low_latency"] != true || up["part_duration_ms"] != 333.0 {
		t.Fatalf("updated record %v %v", up["low_latency"], up["part_duration_ms"])
	}
}

func TestVodPublicHostAndState(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PublicHost = "https://media.example.org:8443" })
	id := e.mustCreate("vod", playerBody("a", 8000))
	e.procs.status[id] = Status{State: "running", Since: e.clock(), LastError: "boom", Restarts: 2}
	p := e.getByID("vod", id)
	if !strings.HasPrefix(p["hls_url"].(string), "http://media.example.org:8000/hls/") {
		t.Fatalf("hls_url %v", p["hls_url"])
	}
	if p["state"] != "running" || p["last_error"] != "boom" || p["restarts"] != 2.0 || p["state_since"] != "2026-11-21T14:02:03.123Z" {
		t.Fatalf("state %v", p)
	}
}

func TestVodCreateInactiveDoesNotStart(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("vod", merge(playerBody("a", 8000), map[string]any{"active": false}))
	if got := e.procs.took(); slices.Contains(got, "start MODULE_VOD "+id) {
		t.Fatalf("started an inactive player: %v", got)
	}
}

func TestVodValidation(t *testing.T) {
	listen := func(port any, tr any) map[string]any {
		return map[string]any{"input_type": "INPUT_TYPE_RTMP_LISTEN", "input_stream_listen_port": map[string]any{"port": port, "transport": tr}}
	}
	cases := []struct {
		name  string
		patch map[string]any
		field string
	}{
		{"missing name", map[string]any{"vod_name": nil}, "vod_name"},
		{"blank name", map[string]any{"vod_name": "   "}, "vod_name"},
		{"long name", map[string]any{"vod_name": strings.Repeat("n", 129)}, "vod_name"},
		{"control char", map[string]any{"vod_name": "a\nb"}, "vod_name"},
		{"name not string", map[string]any{"vod_name": 5}, "vod_name"},
		{"missing port", map[string]any{"vod_port": nil}, "vod_port"},
		{"port zero", map[string]any{"vod_port": 0}, "vod_port"},
		{"port high", map[string]any{"vod_port": 65536}, "vod_port"},
		{"port fraction", map[string]any{"vod_port": 8000.5}, "vod_port"},
		{"port text", map[string]any{"vod_port": "eighty"}, "vod_port"},
		{"port hex string", map[string]any{"vod_port": "0x1F40"}, "vod_port"},
		{"port bool", map[string]any{"vod_port": true}, "vod_port"},
		{"manifest size", map[string]any{"initial_live_manifest_size": 0}, "initial_live_manifest_size"},
		{"sync count", map[string]any{"live_sync_duration_count": 101}, "live_sync_duration_count"},
		{"hls size small", map[string]any{"hls_fragment_size": 0.4}, "hls_fragment_size"},
		{"hls size NaN", map[string]any{"hls_fragment_size": "NaN"}, "hls_fragment_size"},
		{"hls length below size", map[string]any{"hls_fragment_size": 10, "hls_fragment_length": 5}, "hls_fragment_length"},
		{"dash size", map[string]any{"dash_fragment_size": 61}, "dash_fragment_size"},
		{"dash length", map[string]any{"dash_fragment_length": 0}, "dash_fragment_length"},
		{"active string", map[string]any{"active": "true"}, "active"},
		{"missing input", map[string]any{"input": nil}, "input"},
		{"input not object", map[string]any{"input": "srt://x"}, "input"},
		{"bad input type", map[string]any{"input": map[string]any{"input_type": "INPUT_TYPE_FTP"}}, "input.input_type"},
		{"listen port missing", map[string]any{"input": map[string]any{"input_type": "INPUT_TYPE_RTMP_LISTEN"}}, "input.input_stream_listen_port"},
		{"listen port range", map[string]any{"input": listen(70000, "TCP")}, "input.input_stream_listen_port.port"},
		{"listen transport", map[string]any{"input": listen(9000, "SCTP")}, "input.input_stream_listen_port.transport"},
		{"listen wrong transport", map[string]any{"input": listen(9000, "UDP")}, "input.input_stream_listen_port.transport"},
		{"listen same as vod_port", map[string]any{"input": listen(8000, "tcp")}, "input.input_stream_listen_port.port"},
		{"transcoding crf", map[string]any{"transcoding": map[string]any{"crf": 52}}, "transcoding.crf"},
		{"transcoding not object", map[string]any{"transcoding": []any{}}, "transcoding"},
		{"low_latency string", map[string]any{"low_latency": "yes"}, "low_latency"},
		{"part duration small", map[string]any{"low_latency": true, "part_duration_ms": 99}, "part_duration_ms"},
		{"part duration large", map[string]any{"low_latency": true, "part_duration_ms": 1001}, "part_duration_ms"},
		{"part duration fraction", map[string]any{"part_duration_ms": 250.5}, "part_duration_ms"},
		{"part duration not below fragment", map[string]any{"hls_fragment_size": 0.5, "part_duration_ms": 500}, "part_duration_ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			wantErr(t, e.post("/api/vod/create", merge(playerBody("a", 8000), c.patch)), http.StatusBadRequest, CodeValidation, c.field)
			if e.store.count(storage.ModuleVOD) != 0 || len(e.procs.took()) != 0 {
				t.Fatal("something was stored or checked after a validation error")
			}
		})
	}
}

func TestVodNumericStringsAndUnknownFields(t *testing.T) {
	e := newEnv(t)
	body := merge(playerBody("a", 8000), map[string]any{"vod_port": "4000", "hls_fragment_size": "2.5",
		"initial_live_manifest_size": "3", "colour": "blue", "restream_type": "X", "live_sync_duration_count": 4.0})
	id := e.mustCreate("vod", body)
	p := e.getByID("vod", id)
	if p["vod_port"] != 4000.0 || p["hls_fragment_size"] != 2.5 || p["initial_live_manifest_size"] != 3.0 {
		t.Fatalf("numeric strings not stored as numbers: %v", p)
	}
	if _, ok := p["colour"]; ok {
		t.Fatal("unknown field stored")
	}
}

func TestVodConflicts(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("vod", playerBody("a", 8000))
	wantErr(t, e.post("/api/vod/create", playerBody("a", 8100)), http.StatusConflict, CodeNameTaken, "vod_name")

	// vod_port held by an entity of another module.
	e.mustCreate("rtmp-servers", rtmpServerBody("studio", 9000))
	res := e.post("/api/vod/create", playerBody("b", 9000))
	wantErr(t, res, http.StatusConflict, CodePortTaken, "vod_port")
	if msg := res.obj()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "9000/TCP") || !strings.Contains(msg, "studio") {
		t.Fatalf("message does not name port and holder: %q", msg)
	}
	// The input's listen port held by the first player's vod_port.
	wantErr(t, e.post("/api/vod/create", merge(playerBody("c", 7000), map[string]any{"input": map[string]any{
		"input_type": "INPUT_TYPE_HTTP_LISTEN", "input_stream_listen_port": map[string]any{"port": 8000, "transport": "TCP"}}})),
		http.StatusConflict, CodePortTaken, "input.input_stream_listen_port.port")
	// A port another program has bound.
	e.procs.busy[storage.PortKey{Port: 7500, Transport: "TCP"}] = true
	res = e.post("/api/vod/create", playerBody("d", 7500))
	wantErr(t, res, http.StatusConflict, CodePortTaken, "vod_port")
	if msg := res.obj()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "7500/TCP") || !strings.Contains(msg, "another program") {
		t.Fatalf("message %q", msg)
	}
	if n := e.store.count(storage.ModuleVOD); n != 1 {
		t.Fatalf("%d players stored", n)
	}
}

func TestVodUnsupported(t *testing.T) {
	e := newEnv(t)
	e.procs.check = func(r storage.Record) error {
		if p, ok := r.(*storage.Player); ok && p.Transcoding != nil && p.Transcoding.VideoTranscoding == "mpsoc_vcu_hevc" {
			return fmt.Errorf("no HEVC hardware encoder on this server: %w", ErrUnsupported)
		}
		return nil
	}
	body := merge(playerBody("a", 8000), map[string]any{"transcoding": map[string]any{"video_transcoding": "mpsoc_vcu_hevc"}})
	res := e.post("/api/vod/create", body)
	wantErr(t, res, http.StatusUnprocessableEntity, CodeUnsupported, "")
	if !strings.Contains(string(res.raw), "HEVC") {
		t.Fatalf("message lost: %s", res.raw)
	}
	if e.store.count(storage.ModuleVOD) != 0 {
		t.Fatal("stored an unsupported record")
	}
	// Conflicts are reported before 422.
	e.mustCreate("vod", playerBody("b", 8000))
	wantErr(t, e.post("/api/vod/create", merge(body, map[string]any{"vod_name": "b", "vod_port": 8200})), http.StatusConflict, CodeNameTaken, "vod_name")
}

func TestVodUpdate(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("vod", merge(playerBody("a", 8000), map[string]any{"transcoding": map[string]any{"gop": 48, "crf": 20}}))
	e.procs.took()
	e.advance(1500)
	res := e.post("/api/vod/update", map[string]any{"_id": id, "vod_name": "renamed", "transcoding": map[string]any{"gop": 24}, "bogus": 1})
	if res.code != http.StatusOK {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	m := res.obj()
	if m["success"] != true || m["id"] != id {
		t.Fatalf("update answer %s", res.raw)
	}
	wantDate(t, m["updated"])
	p := e.getByID("vod", id)
	if p["vod_name"] != "renamed" || p["vod_port"] != 8000.0 || p["hls_fragment_length"] != 60.0 {
		t.Fatalf("merge lost fields: %v", p)
	}
	if tr := p["transcoding"].(map[string]any); tr["gop"] != 24.0 || tr["crf"] != nil {
		t.Fatalf("a given object must replace the stored one whole: %v", tr)
	}
	if got := e.procs.took(); !slices.Contains(got, "restart MODULE_VOD "+id) {
		t.Fatalf("running player not restarted: %v", got)
	}
	// The merged record is validated as a whole.
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": id, "hls_fragment_length": 2}), http.StatusBadRequest, CodeValidation, "hls_fragment_length")
	// Field errors come before an unknown id.
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": storage.NewID(), "vod_port": -1}), http.StatusBadRequest, CodeValidation, "vod_port")
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": storage.NewID(), "vod_port": 1234}), http.StatusNotFound, CodeNotFound, "")
	// A stopped player stays stopped.
	wantSuccess(t, e.post("/api/vod/stop", map[string]any{"id": id}))
	e.procs.took()
	wantSuccess(t, e.post("/api/vod/update", map[string]any{"id": id, "vod_port": "8500"}))
	if got := e.procs.took(); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "start") || strings.HasPrefix(c, "restart") }) {
		t.Fatalf("stopped player started by update: %v", got)
	}
	// null is absent: the fields keep their values (the player stays stopped, its transcoding
	// stays).
	wantSuccess(t, e.post("/api/vod/update", map[string]any{"id": id, "active": nil, "transcoding": nil, "vod_name": nil}))
	if got := e.procs.took(); slices.ContainsFunc(got, func(c string) bool { return !strings.HasPrefix(c, "check") }) {
		t.Fatalf("an update of nulls acted on the player: %v", got)
	}
	if p := e.getByID("vod", id); p["active"] != false || p["vod_name"] != "renamed" || p["transcoding"] == nil {
		t.Fatalf("an update of nulls changed the player: %v", p)
	}
	// Its own ports do not conflict with itself; the moved port is freed.
	e.mustCreate("vod", merge(playerBody("other", 8000), map[string]any{"input": map[string]any{
		"input_type": "INPUT_TYPE_UDP_LISTEN", "input_stream_listen_port": map[string]any{"port": 8001, "transport": "udp"}}}))
}

func TestVodUpdateConflicts(t *testing.T) {
	e := newEnv(t)
	a := e.mustCreate("vod", playerBody("a", 8000))
	e.mustCreate("vod", playerBody("b", 8100))
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": a, "vod_name": "b"}), http.StatusConflict, CodeNameTaken, "vod_name")
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": a, "vod_port": 8101}), http.StatusConflict, CodePortTaken, "vod_port")
	e.procs.busy[storage.PortKey{Port: 8000, Transport: "TCP"}] = true // bound by a itself
	wantSuccess(t, e.post("/api/vod/update", map[string]any{"id": a, "live_sync_duration_count": 5}))
}

func wantSuccess(t *testing.T, r result) {
	t.Helper()
	if r.code != http.StatusOK || r.obj()["success"] != true {
		t.Fatalf("want success, got %d %s", r.code, r.raw)
	}
}

func TestVodStartStopRemove(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("vod", playerBody("a", 8000))
	e.procs.took()
	wantSuccess(t, e.post("/api/vod/stop", map[string]any{"id": id}))
	if e.getByID("vod", id)["active"] != false {
		t.Fatal("stop did not persist active=false")
	}
	wantSuccess(t, e.post("/api/vod/start", map[string]any{"_id": id}))
	if e.getByID("vod", id)["active"] != true {
		t.Fatal("start did not persist active=true")
	}
	if got := e.procs.took(); !slices.Equal(got, []string{"stop MODULE_VOD " + id, "start MODULE_VOD " + id}) {
		t.Fatalf("calls %v", got)
	}
	wantErr(t, e.post("/api/vod/remove", map[string]any{"id": id}), http.StatusMethodNotAllowed, CodeMethodNotAllowed, "")
	wantSuccess(t, e.do(http.MethodDelete, "/api/vod/remove", map[string]any{"id": id}))
	if got := e.procs.took(); !slices.Equal(got, []string{"remove MODULE_VOD " + id}) {
		t.Fatalf("calls %v", got)
	}
	wantErr(t, e.post("/api/vod/getById", map[string]any{"id": id}), http.StatusNotFound, CodeNotFound, "")
	// Its ports are free again.
	e.mustCreate("vod", playerBody("b", 8000))
}

func TestVodGetStat(t *testing.T) {
	e := newEnv(t)
	a := e.mustCreate("vod", playerBody("a", 8000))
	b := e.mustCreate("vod", playerBody("b", 8100))
	e.procs.status[a] = Status{State: "running"}
	e.procs.stat[a] = Stat{Bitrate: 5000.5, FPS: 25, BytesIn: 1234, UptimeSec: 12}
	e.procs.stat[b] = Stat{Bitrate: 99} // stopped processes report 0
	res := e.post("/api/vod/getStat", nil)
	if res.code != http.StatusOK {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	got := res.arr()
	if len(got) != 2 {
		t.Fatalf("%s", res.raw)
	}
	s0, s1 := got[0].(map[string]any), got[1].(map[string]any)
	if s0["id"] != a || s0["bitrate"] != 5000.5 || s0["fps"] != 25.0 || s0["bytes_in"] != 1234.0 || s0["uptime_sec"] != 12.0 || s0["state"] != "running" {
		t.Fatalf("stat %v", s0)
	}
	if s1["id"] != b || s1["bitrate"] != 0.0 || s1["state"] != "stopped" {
		t.Fatalf("stat %v", s1)
	}
}
