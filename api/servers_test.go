package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestSRTServerDefaultsAndSecret(t *testing.T) {
	e := newEnv(t)
	const secret = "a very secret passphrase"
	id := e.mustCreate("srt-servers", merge(srtServerBody("Main", 10080), map[string]any{"server_passphrase": secret}))
	s := e.getByID("srt-servers", id)
	want := map[string]any{"server_latency": 200.0, "server_maxbw": -1.0, "publisher_prefix": "publisher",
		"receiver_prefix": "receiver", "server_pbkeylen": 16.0, "server_passphrase_set": true, "server_port": 10080.0}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
	if _, ok := s["server_passphrase"]; ok {
		t.Fatal("passphrase returned by getById")
	}
	for _, res := range []result{e.post("/api/srt-servers/getAll", nil), e.post("/api/srt-servers/getById", map[string]any{"id": id})} {
		if strings.Contains(string(res.raw), secret) || strings.Contains(string(res.raw), `"server_passphrase"`) {
			t.Fatalf("passphrase leaked: %s", res.raw)
		}
	}
	// An update that does not mention the passphrase keeps it.
	wantSuccess(t, e.post("/api/srt-servers/update", map[string]any{"id": id, "server_latency": "500"}))
	var stored storage.SRTServer
	if err := e.store.Get(t.Context(), storage.ModuleSRTServers, id, &stored); err != nil || stored.ServerPassphrase != secret || stored.ServerLatency != 500 {
		t.Fatalf("stored %+v %v", stored, err)
	}
	// An empty passphrase clears it.
	wantSuccess(t, e.post("/api/srt-servers/update", map[string]any{"id": id, "server_passphrase": ""}))
	if s := e.getByID("srt-servers", id); s["server_passphrase_set"] != false {
		t.Fatalf("passphrase not cleared: %v", s)
	}
	// Without passphrase, no key length is made up.
	id2 := e.mustCreate("srt-servers", srtServerBody("Plain", 10081))
	if s := e.getByID("srt-servers", id2); s["server_pbkeylen"] != nil || s["server_passphrase_set"] != false {
		t.Fatalf("%v", s)
	}
}

func TestSRTServerValidation(t *testing.T) {
	e := newEnv(t)
	e.wantInvalid(t, "/api/srt-servers/create", srtServerBody("s", 9000), []invalid{
		{map[string]any{"server_name": nil}, "server_name"},
		{map[string]any{"server_name": "a/b"}, "server_name"},
		{map[string]any{"server_port": nil}, "server_port"},
		{map[string]any{"server_port": "99999"}, "server_port"},
		{map[string]any{"server_latency": 19}, "server_latency"},
		{map[string]any{"server_latency": 10001}, "server_latency"},
		{map[string]any{"server_passphrase": "short"}, "server_passphrase"},
		{map[string]any{"server_passphrase": strings.Repeat("p", 80)}, "server_passphrase"},
		{map[string]any{"server_passphrase": 1234567890123}, "server_passphrase"},
		{map[string]any{"server_pbkeylen": 20}, "server_pbkeylen"},
		{map[string]any{"server_maxbw": -2}, "server_maxbw"},
		{map[string]any{"server_timeout": 0}, "server_timeout"},
		{map[string]any{"publisher_prefix": "pub/x"}, "publisher_prefix"},
		{map[string]any{"receiver_prefix": strings.Repeat("r", 33)}, "receiver_prefix"},
		{map[string]any{"publisher_prefix": "same", "receiver_prefix": "same"}, "receiver_prefix"},
		{map[string]any{"active": 1}, "active"},
	})
	if e.store.count(storage.ModuleSRTServers) != 0 {
		t.Fatal("stored an invalid server")
	}
}

func TestServerPortsByTransport(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("srt-servers", srtServerBody("s", 9000))
	e.mustCreate("rtmp-servers", rtmpServerBody("r", 9000)) // 9000/TCP is not 9000/UDP
	wantErr(t, e.post("/api/srt-servers/create", srtServerBody("s2", 9000)), http.StatusConflict, CodePortTaken, "server_port")
	wantErr(t, e.post("/api/rtmp-servers/create", rtmpServerBody("r", 9001)), http.StatusConflict, CodeNameTaken, "server_name")
	wantErr(t, e.post("/api/rtmp-servers/create", rtmpServerBody("", 9001)), http.StatusBadRequest, CodeValidation, "server_name")
	e.procs.busy[storage.PortKey{Port: 1935, Transport: "TCP"}] = true
	wantErr(t, e.post("/api/rtmp-servers/create", rtmpServerBody("r3", 1935)), http.StatusConflict, CodePortTaken, "server_port")
}

func TestServerLifecycleAndStreams(t *testing.T) {
	e := newEnv(t)
	for _, mod := range []string{"srt-servers", "rtmp-servers"} {
		id := e.mustCreate(mod, srtServerBody(mod, 9100))
		wantSuccess(t, e.post("/api/"+mod+"/stop", map[string]any{"id": id}))
		wantSuccess(t, e.post("/api/"+mod+"/start", map[string]any{"id": id}))
		wantSuccess(t, e.post("/api/"+mod+"/update", map[string]any{"id": id, "server_port": 9101}))
		rtt, lost := 12.5, int64(3)
		e.procs.streams = []ActiveStream{{StreamID: "publisher/x/cam", Publisher: "10.0.0.2:5000",
			Since: time.Date(2026, 1, 1, 0, 0, 0, 5e6, time.FixedZone("CET", 3600)), Bitrate: 3000, Readers: 2, RTTMs: &rtt, PacketsLost: &lost}}
		res := e.post("/api/"+mod+"/getActiveStreams", map[string]any{"id": id})
		if res.code != http.StatusOK {
			t.Fatalf("%d %s", res.code, res.raw)
		}
		st := res.arr()[0].(map[string]any)
		if st["since"] != "2025-12-31T23:00:00.005Z" || st["rtt_ms"] != 12.5 || st["packets_lost"] != 3.0 || st["readers"] != 2.0 {
			t.Fatalf("stream %v", st)
		}
		if _, ok := st["retransmitted"]; ok {
			t.Fatalf("absent SRT stat rendered: %v", st)
		}
		if c := e.post("/api/"+mod+"/getCount", nil).obj()["count"]; c != 1.0 {
			t.Fatalf("count %v", c)
		}
		wantSuccess(t, e.do(http.MethodDelete, "/api/"+mod+"/remove", map[string]any{"id": id}))
	}
	e.procs.streams = nil
	id := e.mustCreate("rtmp-servers", rtmpServerBody("x", 1935))
	if res := e.post("/api/rtmp-servers/getActiveStreams", map[string]any{"id": id}); res.code != 200 || string(res.raw) != "[]\n" {
		t.Fatalf("no streams must be [], got %d %q", res.code, res.raw)
	}
}

func TestSRTServerRoundTripOfRead(t *testing.T) {
	// A record read back and sent as update keeps working (generated fields ignored).
	e := newEnv(t)
	id := e.mustCreate("srt-servers", merge(srtServerBody("S", 9000), map[string]any{"server_passphrase": "0123456789"}))
	s := e.getByID("srt-servers", id)
	raw, _ := json.Marshal(s)
	wantSuccess(t, e.post("/api/srt-servers/update", raw))
	var stored storage.SRTServer
	_ = e.store.Get(t.Context(), storage.ModuleSRTServers, id, &stored)
	if stored.ServerPassphrase != "0123456789" {
		t.Fatal("passphrase lost by an update that echoed a read")
	}
}

// TestRTMPServerPasswords: the publish and play passwords are stored, never returned (reads
// show server_publish_password_set and server_play_password_set), kept by an update that does
// not name them or echoes a read, cleared by "", and a list cannot filter on them.
func TestRTMPServerPasswords(t *testing.T) {
	e := newEnv(t)
	const pub, play = "Publish.s3cret-1", "Play_s3cret~2xyz"
	id := e.mustCreate("rtmp-servers", merge(rtmpServerBody("Studio", 1935), map[string]any{
		"server_publish_password": pub, "server_play_password": play}))
	stored := func() storage.RTMPServer {
		t.Helper()
		var s storage.RTMPServer
		if err := e.store.Get(t.Context(), storage.ModuleRTMPServers, id, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := stored(); s.ServerPublishPassword != pub || s.ServerPlayPassword != play {
		t.Fatalf("stored %+v", s)
	}
	s := e.getByID("rtmp-servers", id)
	if s["server_publish_password_set"] != true || s["server_play_password_set"] != true {
		t.Fatalf("read %v", s)
	}
	for _, res := range []result{e.post("/api/rtmp-servers/getAll", nil), e.post("/api/rtmp-servers/getById", map[string]any{"id": id}),
		e.post("/api/rtmp-servers/getAll", map[string]any{"filter": map[string]any{"server_publish_password": pub}})} {
		if strings.Contains(string(res.raw), pub) || strings.Contains(string(res.raw), play) ||
			strings.Contains(string(res.raw), `"server_publish_password"`) || strings.Contains(string(res.raw), `"server_play_password"`) {
			t.Fatalf("password leaked: %s", res.raw)
		}
	}
	if got := names(t, e.post("/api/rtmp-servers/getAll", map[string]any{"filter": map[string]any{"server_play_password": play}}), "server_name"); len(got) != 0 {
		t.Fatalf("a list filtered on the play password: %v", got)
	}

	// A read sent back as an update, and an update naming neither, keep both.
	raw, _ := json.Marshal(s)
	wantSuccess(t, e.post("/api/rtmp-servers/update", raw))
	wantSuccess(t, e.post("/api/rtmp-servers/update", map[string]any{"id": id, "server_port": 1936}))
	if s := stored(); s.ServerPublishPassword != pub || s.ServerPlayPassword != play || s.ServerPort != 1936 {
		t.Fatalf("passwords lost by an update: %+v", s)
	}
	// "" clears one, the other stays.
	wantSuccess(t, e.post("/api/rtmp-servers/update", map[string]any{"id": id, "server_publish_password": ""}))
	if s := e.getByID("rtmp-servers", id); s["server_publish_password_set"] != false || s["server_play_password_set"] != true {
		t.Fatalf("after clearing the publish password: %v", s)
	}
	// Without passwords, both flags are false.
	id2 := e.mustCreate("rtmp-servers", rtmpServerBody("Open", 1937))
	if s := e.getByID("rtmp-servers", id2); s["server_publish_password_set"] != false || s["server_play_password_set"] != false {
		t.Fatalf("%v", s)
	}
}

func TestRTMPServerValidation(t *testing.T) {
	e := newEnv(t)
	cases := []invalid{
		{map[string]any{"server_name": "a?b"}, "server_name"},
		{map[string]any{"server_port": 0}, "server_port"},
	}
	for _, key := range []string{"server_publish_password", "server_play_password"} {
		cases = append(cases,
			invalid{map[string]any{key: "short"}, key},
			invalid{map[string]any{key: strings.Repeat("p", 129)}, key},
			invalid{map[string]any{key: "with space 123"}, key},
			invalid{map[string]any{key: "amp&ersand123"}, key},
			invalid{map[string]any{key: "per%cent12345"}, key},
			invalid{map[string]any{key: 12345678901}, key},
		)
	}
	e.wantInvalid(t, "/api/rtmp-servers/create", rtmpServerBody("r", 1935), cases)
	if e.store.count(storage.ModuleRTMPServers) != 0 {
		t.Fatal("stored an invalid server")
	}
	// The bounds pass.
	e.mustCreate("rtmp-servers", merge(rtmpServerBody("r", 1935), map[string]any{
		"server_publish_password": "0123456789", "server_play_password": strings.Repeat("a.b_c~d-", 16)}))
}
