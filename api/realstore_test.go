package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// TestWithRealStore runs the main flows against the SQLite store, to hold the fakes to it
// (TestContractOnPostgres runs them on PostgreSQL).
func TestWithRealStore(t *testing.T) {
	withRealStore(t, tempStore(t))
}

// realStoreEnv is an API on st (a new empty store) with fake processes, logged in.
func realStoreEnv(t *testing.T, st *storage.Store) *env {
	t.Helper()
	bootstrap(t, st)
	procs := newFakeProcs()
	h, err := New(Config{Store: st, Procs: procs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h, procs: procs}
	res := e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken)
	if res.code != http.StatusOK {
		t.Fatalf("login %d %s", res.code, res.raw)
	}
	e.token = res.obj()["token"].(string)
	return e
}

// TestStoreConflictsNameTheirField: a create or update that passes the API's own check but
// loses at the store to a request made meanwhile (two at once) still names the field at fault,
// as the API's own check does.
func TestStoreConflictsNameTheirField(t *testing.T) {
	e := realStoreEnv(t, tempStore(t))
	// racing, when set, is created by the next check, after the API looked for conflicts and
	// before it stores: as another request made at that moment would.
	var racing map[string]any
	e.procs.check = func(storage.Record) error {
		if b := racing; b != nil {
			racing = nil
			e.mustCreate("vod", b)
		}
		return nil
	}
	racing = playerBody("lobby", 8100)
	wantErr(t, e.post("/api/vod/create", playerBody("lobby", 8000)), http.StatusConflict, CodeNameTaken, "vod_name")
	racing = playerBody("hall", 8200)
	res := e.post("/api/vod/create", playerBody("attic", 8200))
	wantErr(t, res, http.StatusConflict, CodePortTaken, "vod_port")
	if !strings.Contains(string(res.raw), "hall") {
		t.Fatalf("holder not named: %s", res.raw)
	}
	id := e.mustCreate("vod", playerBody("cellar", 8300))
	racing = playerBody("porch", 8400)
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": id, "vod_name": "porch"}), http.StatusConflict, CodeNameTaken, "vod_name")
	racing = playerBody("yard", 8500)
	wantErr(t, e.post("/api/vod/update", map[string]any{"id": id, "vod_port": 8500}), http.StatusConflict, CodePortTaken, "vod_port")
}

// withRealStore runs the main flows against st, a new empty store.
func withRealStore(t *testing.T, st *storage.Store) {
	ctx := context.Background()
	e := realStoreEnv(t, st)
	var res result

	srt := e.mustCreate("srt-servers", merge(srtServerBody("Main", 9000), map[string]any{"server_passphrase": "0123456789abc"}))
	vod := e.mustCreate("vod", playerBody("lobby", 8000))
	rs := e.mustCreate("restream", merge(restreamBody("r"), map[string]any{"input": map[string]any{
		"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srt, "input_stream_id": "publisher/main/cam"}}))
	rec := e.mustCreate("recording", recordingBody("rec"))

	// Conflicts as the store reports them.
	wantErr(t, e.post("/api/vod/create", playerBody("lobby", 8500)), http.StatusConflict, CodeNameTaken, "vod_name")
	res = e.post("/api/rtmp-servers/create", rtmpServerBody("x", 8001))
	wantErr(t, res, http.StatusConflict, CodePortTaken, "server_port")
	if !strings.Contains(string(res.raw), "lobby") {
		t.Fatalf("holder not named: %s", res.raw)
	}

	// Update merge, start/stop, reads.
	wantSuccess(t, e.post("/api/vod/update", map[string]any{"id": vod, "vod_port": "8100", "input": map[string]any{
		"input_type": "INPUT_TYPE_UDP_LISTEN", "input_stream_listen_port": map[string]any{"port": 8001, "transport": "udp"}}}))
	wantSuccess(t, e.post("/api/vod/stop", map[string]any{"id": vod}))
	p := e.getByID("vod", vod)
	if p["vod_port"] != 8100.0 || p["active"] != false || p["hls_fragment_size"] != 3.0 {
		t.Fatalf("player %v", p)
	}
	wantDate(t, p["modified"])
	e.mustCreate("rtmp-servers", rtmpServerBody("x", 8001)) // 8001/TCP was freed by the update
	s := e.getByID("srt-servers", srt)
	if _, ok := s["server_passphrase"]; ok || s["server_passphrase_set"] != true {
		t.Fatalf("srt server %v", s)
	}
	r := e.getByID("restream", rs)
	if r["restream_type"] != "RESTREAM_TYPE_SRT_TO_RTMP" || len(r["input"].([]any)) != 1 {
		t.Fatalf("restream %v", r)
	}
	if got := names(t, e.post("/api/srt-servers/getAll", map[string]any{"filter": map[string]any{"server_port": 9000}}), "server_name"); len(got) != 1 {
		t.Fatalf("filter %v", got)
	}
	ports := e.post("/api/ports/getAll", map[string]any{"sort": map[string]any{"port": 1}}).arr()
	if len(ports) != 4 || ports[0].(map[string]any)["port"] != 8001.0 {
		t.Fatalf("ports %v", ports)
	}

	// Files.
	f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec, Name: "a.mp4", Path: "rec/a.mp4", Format: "mp4", State: storage.FileRecording,
		Created: time.Now()}
	if err := st.AddFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	files := e.getByID("recording", rec)["recordedFiles"].([]any)
	if len(files) != 1 || files[0].(map[string]any)["ended"] != nil {
		t.Fatalf("files %v", files)
	}
	wantSuccess(t, e.post("/api/recording/removeFile", map[string]any{"record_id": rec, "file_id": f.ID}))

	// Remove and logout.
	wantSuccess(t, e.do(http.MethodDelete, "/api/restream/remove", map[string]any{"_id": rs}))
	wantErr(t, e.post("/api/restream/getById", map[string]any{"id": rs}), http.StatusNotFound, CodeNotFound, "")
	wantSuccess(t, e.post("/api/auth/logout", nil))
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")
	tok, err := IssueToken(ctx, st, "admin", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.token = tok
	if res := e.post("/api/vod/getCount", nil); res.code != http.StatusOK || res.obj()["count"] != 1.0 {
		t.Fatalf("count %d %s", res.code, res.raw)
	}
}
