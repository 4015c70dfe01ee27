package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
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
		"RTMPServer":  {"server_name", "server_port"},
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
