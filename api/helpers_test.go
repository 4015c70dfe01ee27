package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

func init() {
	// Keep the test suite fast; production hashes use the full work factor.
	PasswordIterations = 1000
}

const adminPassword = "correct horse battery"

// env is an API under test with fakes behind it.
type env struct {
	t     testing.TB
	h     http.Handler
	store *fakeStore
	procs *fakeProcs
	utils *fakeUtils
	cfg   Config
	token string
	now   *testutil.Clock
}

// tempStore opens a new SQLite store in the test's temporary folder, closed when the test ends.
func tempStore(t testing.TB) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// bootstrappedStore is tempStore with its administrator made.
func bootstrappedStore(t testing.TB) *storage.Store {
	t.Helper()
	st := tempStore(t)
	bootstrap(t, st)
	return st
}

// bootstrap makes st's administrator (Bootstrap, adminPassword).
func bootstrap(t testing.TB, st Store) {
	t.Helper()
	if _, err := Bootstrap(context.Background(), st, adminPassword); err != nil {
		t.Fatal(err)
	}
}

func (e *env) clock() time.Time { return e.now.Now() }

func (e *env) advance(d time.Duration) { e.now.Advance(d) }

func newEnv(t testing.TB, tweak ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, store: newFakeStore(), procs: newFakeProcs(), utils: &fakeUtils{},
		now: testutil.NewClock(time.Date(2026, 11, 21, 14, 2, 3, 123456789, time.UTC))}
	bootstrap(t, e.store)
	e.cfg = Config{Store: e.store, Procs: e.procs, Utils: e.utils, Now: e.clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LoginFailures: 3, LoginWindow: time.Minute}
	for _, f := range tweak {
		f(&e.cfg)
	}
	h, err := New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	res := e.do(http.MethodPost, "/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken)
	if res.code != http.StatusOK {
		t.Fatalf("login: %d %s", res.code, res.raw)
	}
	e.token = res.obj()["token"].(string)
	return e
}

// result is a recorded response.
type result struct {
	t      testing.TB
	code   int
	header http.Header
	raw    []byte
}

func (r result) obj() map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.raw, &m); err != nil {
		r.t.Fatalf("response is not a JSON object (%d): %q", r.code, r.raw)
	}
	return m
}

func (r result) arr() []any {
	r.t.Helper()
	var a []any
	if err := json.Unmarshal(r.raw, &a); err != nil {
		r.t.Fatalf("response is not a JSON array (%d): %q", r.code, r.raw)
	}
	return a
}

// noToken sends a request without the env's token.
func noToken(r *http.Request) { r.Header.Del("x-access-token") }

func withHeader(k, v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, v) } }

func (e *env) do(method, path string, body any, opts ...func(*http.Request)) result {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-access-token", e.token)
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return result{t: e.t, code: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
}

func (e *env) post(path string, body any, opts ...func(*http.Request)) result {
	e.t.Helper()
	return e.do(http.MethodPost, path, body, opts...)
}

// mustCreate creates a record and returns its id.
func (e *env) mustCreate(module string, body any) string {
	e.t.Helper()
	res := e.post("/api/"+module+"/create", body)
	if res.code != http.StatusCreated {
		e.t.Fatalf("create %s: %d %s", module, res.code, res.raw)
	}
	return res.obj()["id"].(string)
}

func (e *env) getByID(module, id string) map[string]any {
	e.t.Helper()
	res := e.post("/api/"+module+"/getById", map[string]any{"id": id})
	if res.code != http.StatusOK {
		e.t.Fatalf("getById %s: %d %s", module, res.code, res.raw)
	}
	return res.obj()
}

// wantErr checks an error response: status, code and (when not "") field.
func wantErr(t testing.TB, r result, status int, code, field string) {
	t.Helper()
	if r.code != status {
		t.Fatalf("status %d, want %d: %s", r.code, status, r.raw)
	}
	m := r.obj()
	e, _ := m["error"].(map[string]any)
	if m["success"] != false || e == nil {
		t.Fatalf("not an error body: %s", r.raw)
	}
	if e["code"] != code {
		t.Fatalf("code %v, want %s: %s", e["code"], code, r.raw)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Fatalf("empty message: %s", r.raw)
	}
	if got, _ := e["field"].(string); got != field {
		t.Fatalf("field %q, want %q: %s", got, field, r.raw)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
}

var dateRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func wantDate(t testing.TB, v any) {
	t.Helper()
	if s, _ := v.(string); !dateRE.MatchString(s) {
		t.Fatalf("date %v is not ISO 8601 UTC with milliseconds", v)
	}
}

// Valid create bodies, shared by the tests and the fuzz seeds.

func playerBody(name string, port int) map[string]any {
	return map[string]any{
		"vod_name": name, "vod_port": port,
		"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 3, "hls_fragment_length": 60, "dash_fragment_size": 3, "dash_fragment_length": 60,
		"input": map[string]any{"input_type": "INPUT_TYPE_RTMP_LISTEN",
			"input_stream_listen_port": map[string]any{"port": port + 1, "transport": "tcp"}},
	}
}

func restreamBody(name string) map[string]any {
	return map[string]any{
		"restream_name": name,
		"input":         map[string]any{"input_type": "INPUT_TYPE_SRT_URL", "input_stream_url": "srt://example.com:9000?streamid=cam1&rcvbuf=1000000"},
		"output":        map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": "rtmp://live.example.com/app", "output_stream_key": "key1"},
		"transcoding":   map[string]any{"video_transcoding": "libx264", "output_video_bitrate": 4000, "gop": 48, "preset": "very fast"},
	}
}

func recordingBody(name string) map[string]any {
	return map[string]any{
		"recording_name": name, "recording_type": "RECORDING_STREAM_TO_FILE", "output_format": "mp4",
		"input": map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"},
	}
}

func srtServerBody(name string, port int) map[string]any {
	return map[string]any{"server_name": name, "server_port": port}
}

func rtmpServerBody(name string, port int) map[string]any {
	return map[string]any{"server_name": name, "server_port": port}
}

// merge returns a copy of base with kv applied (nil values delete).
// invalid is a change to a valid body and the field the API's validation error must name.
type invalid struct {
	patch map[string]any
	field string
}

// wantInvalid posts body changed by each case to path and checks that the API refuses it
// with a validation error on the case's field.
func (e *env) wantInvalid(t testing.TB, path string, body map[string]any, cases []invalid) {
	t.Helper()
	for _, c := range cases {
		wantErr(t, e.post(path, merge(body, c.patch)), http.StatusBadRequest, CodeValidation, c.field)
	}
}

func merge(base map[string]any, kv map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range kv {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}
