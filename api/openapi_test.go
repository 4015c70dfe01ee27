package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func TestOpenAPIMatchesRouter(t *testing.T) {
	e := newEnv(t)
	res := e.do(http.MethodGet, "/api/openapi.json", nil, noToken)
	if res.code != http.StatusOK {
		t.Fatalf("%d %s", res.code, res.raw)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(res.raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	inRouter := map[string]bool{}
	for _, rt := range walkRoutes(t, e.h) {
		key := strings.ToLower(rt.method) + " " + openAPIPath(rt.pattern)
		inRouter[key] = true
		p, ok := doc.Paths[openAPIPath(rt.pattern)]
		if !ok || p[strings.ToLower(rt.method)] == nil {
			t.Errorf("route %s %s is not in the document", rt.method, rt.pattern)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !inRouter[method+" "+path] {
				t.Errorf("document has %s %s, which is not registered", method, path)
			}
		}
	}
	if len(inRouter) < 60 {
		t.Fatalf("only %d routes", len(inRouter))
	}
}

func TestOpenAPICreateSchemas(t *testing.T) {
	e := newEnv(t)
	var doc map[string]any
	if err := json.Unmarshal(e.do(http.MethodGet, "/api/openapi.json", nil).raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	want := map[string][]string{
		"Player":      {"vod_name", "input", "vod_port", "hls_fragment_size", "transcoding", "active"},
		"Restream":    {"restream_name", "input", "output", "transcoding"},
		"Recording":   {"recording_name", "recording_type", "input", "output_format"},
		"SRTServer":   {"server_name", "server_port", "server_passphrase", "publisher_prefix"},
		"RTMPServer":  {"server_name", "server_port", "server_publish_password", "server_play_password"},
		"Input":       {"input_type", "input_server_id", "input_stream_listen_port", "input_stream_url"},
		"Output":      {"output_type", "output_stream_url", "output_stream_key"},
		"Transcoding": {"video_transcoding", "audio_trancoding", "frame_width", "force_key_frames"},
	}
	for name, fields := range want {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			t.Fatalf("schema %s missing", name)
		}
		props := s["properties"].(map[string]any)
		for _, f := range fields {
			if props[f] == nil {
				t.Errorf("%s lacks %s", name, f)
			}
		}
	}
	paths := doc["paths"].(map[string]any)
	create := paths["/api/vod/create"].(map[string]any)["post"].(map[string]any)
	ref := create["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"]
	if ref != "#/components/schemas/Player" {
		t.Fatalf("vod create body %v", ref)
	}
	var refs []string
	collectRefs(doc, &refs)
	for _, r := range refs {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		if schemas[name] == nil {
			t.Errorf("dangling $ref %s", r)
		}
	}
}

func collectRefs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				*out = append(*out, s)
			}
			collectRefs(e, out)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, out)
		}
	}
}

// TestOpenAPIErrorStatuses: the document names 507 on the routes that write, 429 and 503 on
// login, INSUFFICIENT_STORAGE among the error codes, and logoutAll.
func TestOpenAPIErrorStatuses(t *testing.T) {
	e := newEnv(t)
	var doc map[string]any
	if err := json.Unmarshal(e.do(http.MethodGet, "/api/openapi.json", nil).raw, &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	responses := func(path, method string) map[string]any {
		op, _ := paths[path].(map[string]any)[method].(map[string]any)
		if op == nil {
			t.Fatalf("%s %s not in the document", method, path)
		}
		return op["responses"].(map[string]any)
	}
	for _, w := range [][2]string{{"/api/vod/create", "post"}, {"/api/restream/update", "post"}, {"/api/recording/start", "post"},
		{"/api/srt-servers/stop", "post"}, {"/api/rtmp-servers/remove", "delete"}, {"/api/recording/removeFile", "post"},
		{"/api/auth/logout", "post"}, {"/api/auth/logoutAll", "post"}} {
		if responses(w[0], w[1])["507"] == nil {
			t.Errorf("%s %s does not name 507", w[1], w[0])
		}
	}
	if responses("/api/vod/getAll", "post")["507"] != nil {
		t.Error("a read names 507")
	}
	login := responses("/api/auth/login", "post")
	if login["429"] == nil || login["503"] == nil {
		t.Errorf("login responses %v", login)
	}
	codes := doc["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"]
	if !strings.Contains(fmt.Sprint(codes), CodeInsufficientStorage) {
		t.Errorf("error codes %v", codes)
	}
}

// readOpenAPI reads the document the API serves.
func readOpenAPI(t *testing.T, e *env) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(e.do(http.MethodGet, "/api/openapi.json", nil).raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIErrorCodesAndDescriptions: the Error schema lists every code the handlers answer
// (NODE_RUNNING included), every response has a description (OpenAPI requires one), and a
// 503 outside login does not claim to be about password checks.
func TestOpenAPIErrorCodesAndDescriptions(t *testing.T) {
	e := newEnv(t)
	doc := readOpenAPI(t, e)
	codes := doc["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
	for _, c := range []string{CodeBadJSON, CodeValidation, CodeUnauthorized, CodeNotFound, CodeMethodNotAllowed, CodeNameTaken,
		CodePortTaken, CodeTooLarge, CodeUnsupported, CodeRateLimited, CodeInternal, CodeUnavailable, CodeInsufficientStorage, CodeNodeRunning} {
		if !strings.Contains(fmt.Sprint(codes), c) {
			t.Errorf("error code %s is not in the document's enum %v", c, codes)
		}
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			for status, r := range op.(map[string]any)["responses"].(map[string]any) {
				d, _ := r.(map[string]any)["description"].(string)
				if d == "" {
					t.Errorf("%s %s: response %s has no description", method, path, status)
				}
				if status == "503" && path != "/api/auth/login" && strings.Contains(d, "password") {
					t.Errorf("%s %s: 503 described as %q", method, path, d)
				}
			}
		}
	}
}

// TestOpenAPIBoundsMatchValidation: where the validation refuses a bound (filter_fps and
// force_key_frames must be above 0), the document says so with exclusiveMinimum.
func TestOpenAPIBoundsMatchValidation(t *testing.T) {
	e := newEnv(t)
	for _, k := range []string{"filter_fps", "force_key_frames"} {
		body := merge(restreamBody("r"), map[string]any{"transcoding": map[string]any{k: 0}})
		wantErr(t, e.post("/api/restream/create", body), http.StatusBadRequest, CodeValidation, "transcoding."+k)
	}
	props := readOpenAPI(t, e)["components"].(map[string]any)["schemas"].(map[string]any)["Transcoding"].(map[string]any)["properties"].(map[string]any)
	fkf := props["force_key_frames"].(map[string]any)["oneOf"].([]any)[0].(map[string]any)
	for name, s := range map[string]map[string]any{"filter_fps": props["filter_fps"].(map[string]any), "force_key_frames": fkf} {
		if _, ok := s["minimum"]; ok || s["exclusiveMinimum"] != 0.0 {
			t.Errorf("%s: %v, want exclusiveMinimum 0 and no minimum", name, s)
		}
	}
}

// TestOpenAPIPortClaimEntityID: the API server's own port claim has entity_id "api", which the
// PortClaim schema must allow besides an ObjectId.
func TestOpenAPIPortClaimEntityID(t *testing.T) {
	e := newEnv(t)
	s := readOpenAPI(t, e)["components"].(map[string]any)["schemas"].(map[string]any)["PortClaim"].(map[string]any)["properties"].(map[string]any)["entity_id"].(map[string]any)
	p, _ := s["pattern"].(string)
	for _, id := range []string{"api", storage.NewID()} {
		if p != "" && !regexp.MustCompile(p).MatchString(id) {
			t.Errorf("entity_id pattern %q refuses %q", p, id)
		}
	}
}

// meetsRequired tells whether an object with keys meets schema's required and anyOf-required.
func meetsRequired(schema map[string]any, keys ...string) bool {
	has := func(req any) bool {
		list, _ := req.([]any)
		for _, k := range list {
			if !slices.Contains(keys, k.(string)) {
				return false
			}
		}
		return true
	}
	if !has(schema["required"]) {
		return false
	}
	alts, ok := schema["anyOf"].([]any)
	if !ok {
		return true
	}
	for _, a := range alts {
		if has(a.(map[string]any)["required"]) {
			return true
		}
	}
	return false
}

// TestOpenAPIRequiredAcceptsAliases: the API takes _id for id and username for email, so the
// document must not require the one spelling alone.
func TestOpenAPIRequiredAcceptsAliases(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("vod", playerBody("a", 8000))
	if res := e.post("/api/vod/getById", map[string]any{"_id": id}); res.code != http.StatusOK {
		t.Fatalf("_id refused: %d %s", res.code, res.raw)
	}
	if res := e.post("/api/auth/login", map[string]any{"username": "admin", "password": adminPassword}, noToken); res.code != http.StatusOK {
		t.Fatalf("username refused: %d %s", res.code, res.raw)
	}
	doc := readOpenAPI(t, e)
	body := func(path string) map[string]any {
		op := doc["paths"].(map[string]any)[path].(map[string]any)["post"].(map[string]any)
		s := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		if ref, ok := s["$ref"].(string); ok {
			s = doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return s
	}
	cases := []struct {
		path string
		keys []string
		want bool
	}{
		{"/api/vod/getById", []string{"id"}, true},
		{"/api/vod/getById", []string{"_id"}, true},
		{"/api/vod/getById", nil, false},
		{"/api/restream/update", []string{"_id"}, true},
		{"/api/restream/update", []string{"restream_name"}, false},
		{"/api/auth/login", []string{"email", "password"}, true},
		{"/api/auth/login", []string{"username", "password"}, true},
		{"/api/auth/login", []string{"password"}, false},
		{"/api/auth/login", []string{"username"}, false},
	}
	for _, c := range cases {
		if got := meetsRequired(body(c.path), c.keys...); got != c.want {
			t.Errorf("%s with %v: meets the schema's required %v, want %v", c.path, c.keys, got, c.want)
		}
	}
}

// TestOpenAPITransportPattern: transport is taken in any case; the document's pattern says so
// without Go's inline (?i) flag, which ECMA-262 patterns (JSON Schema's dialect) do not have.
func TestOpenAPITransportPattern(t *testing.T) {
	e := newEnv(t)
	input := readOpenAPI(t, e)["components"].(map[string]any)["schemas"].(map[string]any)["Input"].(map[string]any)["properties"].(map[string]any)
	p := input["input_stream_listen_port"].(map[string]any)["properties"].(map[string]any)["transport"].(map[string]any)["pattern"].(string)
	if strings.Contains(p, "(?") {
		t.Fatalf("pattern %q uses a Go-only group", p)
	}
	re := regexp.MustCompile(p)
	for s, want := range map[string]bool{"udp": true, "TCP": true, "Udp": true, "tCp": true, "sctp": false, "": false} {
		if re.MatchString(s) != want {
			t.Errorf("pattern %q on %q: %v, want %v", p, s, !want, want)
		}
	}
	body := playerBody("a", 8000)
	body["input"].(map[string]any)["input_stream_listen_port"] = map[string]any{"port": 8001, "transport": "tCp"}
	e.mustCreate("vod", body)
}
