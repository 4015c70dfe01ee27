package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// fakeRunners records which records were started and runs them until stopped.
type fakeRunners struct {
	mu      sync.Mutex
	started map[string]int
}

func (f *fakeRunners) factory(rec storage.Record) (*Pipeline, error) {
	id := rec.Meta().ID
	return &Pipeline{Input: &Part{Name: "fake", Run: func(ctx context.Context, rep supervisor.Reporter) error {
		f.mu.Lock()
		f.started[id]++
		f.mu.Unlock()
		rep.SetState(supervisor.Running)
		<-ctx.Done()
		return nil
	}}}, nil
}

func (f *fakeRunners) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started[id]
}

// testServer is one run of the server on a loopback port.
type testServer struct {
	t      *testing.T
	base   string
	token  string
	cancel context.CancelFunc
	done   chan error
	// client makes the API calls: with --tls-cert one that trusts that certificate; nil is
	// http.DefaultClient.
	client *http.Client
}

func startServer(t *testing.T, data string, runners RunnerFactory) *testServer {
	t.Helper()
	return startServerEnv(t, data, runners, func(string) string { return "" })
}

// startServerEnv starts a server with the given environment (flags fix the address and data).
func startServerEnv(t *testing.T, data string, runners RunnerFactory, getenv func(string) string) *testServer {
	t.Helper()
	return startServerLog(t, data, runners, getenv, nil)
}

// startServerLogging starts a server on a new data folder whose log, made by the logging flags
// given (--log-level, --log-format), goes to the buffer it returns.
func startServerLogging(t *testing.T, flags ...string) (*testServer, *testutil.SyncBuffer) {
	t.Helper()
	cfg, err := ParseConfig("sluice", flags, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	return startServerLog(t, t.TempDir(), nil, func(string) string { return "" }, cfg.NewLogger(logs)), logs
}

// startServerLog is startServerEnv with the server's logger (nil: none).
func startServerLog(t *testing.T, data string, runners RunnerFactory, getenv func(string) string, log *slog.Logger) *testServer {
	t.Helper()
	cfg, err := ParseConfig("sluice", []string{"--addr", "127.0.0.1:0", "--data", data}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminPassword = "correct-horse-battery"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	ts := &testServer{t: t, cancel: cancel, done: make(chan error, 1), client: http.DefaultClient}
	scheme := "http://"
	if cfg.TLS.On() {
		scheme, ts.client = "https://", testutil.TrustingClient(t, cfg.TLS.Cert)
	}
	go func() {
		ts.done <- Run(ctx, cfg, Options{Runners: runners, Logger: log, OnReady: func(a net.Addr) { ready <- a }})
	}()
	select {
	case a := <-ready:
		ts.base = scheme + a.String()
	case err := <-ts.done:
		t.Fatalf("server exited at start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server not ready after 60 s")
	}
	var login struct {
		Success bool   `json:"success"`
		Token   string `json:"token"`
	}
	ts.call("/api/auth/login", map[string]any{"email": "admin", "password": cfg.AdminPassword}, http.StatusOK, &login)
	if !login.Success || login.Token == "" {
		t.Fatalf("login: %+v", login)
	}
	ts.token = login.Token
	return ts
}

// stop ends the server as SIGTERM would and checks it returns within the shutdown timeout.
func (ts *testServer) stop() {
	ts.t.Helper()
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			ts.t.Fatalf("server returned %v", err)
		}
	case <-time.After(10 * time.Second):
		ts.t.Fatal("server did not stop within 10 s")
	}
}

// calls is the API as the test's admin calls it.
func (ts *testServer) calls() testutil.API {
	return testutil.API{T: ts.t, Base: ts.base, Token: ts.token, HTTP: ts.client}
}

func (ts *testServer) call(path string, body any, want int, out any) {
	ts.t.Helper()
	ts.calls().Call(path, body, want, out)
}

type created struct {
	ID string `json:"id"`
}

func TestRestartKeepsRecordsAndStartsActive(t *testing.T) {
	data := t.TempDir()
	runs := &fakeRunners{started: map[string]int{}}
	ts := startServer(t, data, runs.factory)

	var srv, active, inactive created
	ts.call("/api/rtmp-servers/create", map[string]any{"server_name": "studio", "server_port": testutil.FreePort(t)}, http.StatusCreated, &srv)
	ts.call("/api/vod/create", map[string]any{
		"vod_name": "lobby", "vod_port": testutil.FreePort(t),
		"input":                      map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv.ID, "input_stream_id": "cam1"},
		"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 3, "hls_fragment_length": 60, "dash_fragment_size": 3, "dash_fragment_length": 60,
	}, http.StatusCreated, &active)
	ts.call("/api/restream/create", map[string]any{
		"restream_name": "to-cdn", "active": false,
		"input":  map[string]any{"input_type": "INPUT_TYPE_SRT_LISTEN", "input_stream_listen_port": map[string]any{"port": testutil.FreePort(t), "transport": "udp"}},
		"output": map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": "rtmp://127.0.0.1:1935/live", "output_stream_key": "k"},
	}, http.StatusCreated, &inactive)
	waitState(t, ts, "/api/vod/getById", active.ID, "running")
	if runs.count(active.ID) != 1 || runs.count(inactive.ID) != 0 {
		t.Fatalf("first run: started %v", runs.started)
	}
	ts.stop()

	runs2 := &fakeRunners{started: map[string]int{}}
	ts2 := startServer(t, data, runs2.factory)
	defer ts2.stop()
	for _, c := range []struct {
		path, id string
		active   bool
		state    string
	}{
		{"/api/rtmp-servers/getById", srv.ID, true, "running"},
		{"/api/vod/getById", active.ID, true, "running"},
		{"/api/restream/getById", inactive.ID, false, "stopped"},
	} {
		if c.active {
			waitState(t, ts2, c.path, c.id, c.state)
		}
		var rec map[string]any
		ts2.call(c.path, map[string]any{"id": c.id}, http.StatusOK, &rec)
		if rec["id"] != c.id || rec["_id"] != c.id || rec["active"] != c.active || rec["state"] != c.state {
			t.Errorf("%s after restart: id %v _id %v active %v state %v; want %s %v %s", c.path, rec["id"], rec["_id"], rec["active"], rec["state"], c.id, c.active, c.state)
		}
		want := 0
		if c.active {
			want = 1
		}
		if got := runs2.count(c.id); got != want {
			t.Errorf("%s %s started %d times after restart, want %d", c.path, c.id, got, want)
		}
	}
}

func TestAPIPortClaimedAsModuleAPI(t *testing.T) {
	runs := &fakeRunners{started: map[string]int{}}
	ts := startServer(t, t.TempDir(), runs.factory)
	defer ts.stop()
	_, portStr, _ := net.SplitHostPort(ts.base[len("http://"):])
	var claims []map[string]any
	ts.call("/api/ports/getAll", nil, http.StatusOK, &claims)
	if len(claims) != 1 || claims[0]["module_name"] != "MODULE_API" || fmt.Sprint(claims[0]["port"]) != portStr || claims[0]["transport"] != "TCP" {
		t.Fatalf("port claims %v, want the API port %s/TCP as MODULE_API", claims, portStr)
	}
	// A player on the API's port is refused.
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	ts.call("/api/vod/create", map[string]any{
		"vod_name": "clash", "vod_port": portStr,
		"input":                      map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"},
		"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 3, "hls_fragment_length": 60, "dash_fragment_size": 3, "dash_fragment_length": 60,
	}, http.StatusConflict, &e)
	if e.Error.Code != "PORT_TAKEN" {
		t.Fatalf("code %q, want PORT_TAKEN", e.Error.Code)
	}
}

func waitState(t *testing.T, ts *testServer, path, id, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var rec map[string]any
		ts.call(path, map[string]any{"id": id}, http.StatusOK, &rec)
		if rec["state"] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: state %v, want %s", path, id, rec["state"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startFFmpegServer starts a server on a fresh data folder for a test that runs ffmpeg (it fails
// without it), and stops it when the test ends.
func startFFmpegServer(t *testing.T) *testServer {
	t.Helper()
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	t.Cleanup(ts.stop)
	return ts
}
