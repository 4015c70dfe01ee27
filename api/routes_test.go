package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/sluicemedia/sluice/storage"
)

type registered struct{ method, pattern string }

func walkRoutes(t *testing.T, h http.Handler) []registered {
	t.Helper()
	var out []registered
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, registered{method, route})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// concrete fills a route pattern's parameters.
func concrete(pattern string) string {
	p := strings.Replace(pattern, "{file_id}", storage.NewID(), 1)
	p = strings.Replace(p, "{record_id}", storage.NewID(), 1)
	return strings.Replace(p, "*", "x/y/index.m3u8", 1)
}

func isPublic(pattern string) bool {
	return !strings.HasPrefix(pattern, "/api/") || pattern == "/api/auth/login" || pattern == "/api/openapi.json" ||
		strings.HasPrefix(pattern, "/api/utils/speedtest/")
}

func TestEveryAPIRouteNeedsToken(t *testing.T) {
	e := newEnv(t)
	for _, rt := range walkRoutes(t, e.h) {
		if isPublic(rt.pattern) {
			continue
		}
		for _, tok := range []string{"", "garbage", "a.b.c"} {
			res := e.do(rt.method, concrete(rt.pattern), nil, withHeader("x-access-token", tok))
			wantErr(t, res, http.StatusUnauthorized, CodeUnauthorized, "")
		}
	}
}

func TestEveryRouteRefusesOtherMethods(t *testing.T) {
	e := newEnv(t)
	byPattern := map[string][]string{}
	for _, rt := range walkRoutes(t, e.h) {
		byPattern[rt.pattern] = append(byPattern[rt.pattern], rt.method)
	}
	for pattern, methods := range byPattern {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut} {
			if slices.Contains(methods, m) {
				continue
			}
			res := e.do(m, concrete(pattern), "{}")
			wantErr(t, res, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "")
			for _, allowed := range methods {
				if !slices.Contains(res.header.Values("Allow"), allowed) {
					t.Errorf("%s %s: Allow %v lacks %s", m, pattern, res.header.Values("Allow"), allowed)
				}
			}
		}
	}
}

func TestEveryBodyRouteRefusesBadJSONAndLargeBodies(t *testing.T) {
	e := newEnv(t)
	big := `{"vod_name":"` + strings.Repeat("a", maxBody) + `"}`
	for _, rt := range walkRoutes(t, e.h) {
		if rt.method != http.MethodPost && rt.method != http.MethodDelete || !strings.HasPrefix(rt.pattern, "/api/") {
			continue
		}
		if strings.HasPrefix(rt.pattern, "/api/utils/speedtest/") {
			continue // the speed-test peer takes raw bytes, tested in speedtest_peer_test.go
		}
		for _, bad := range []string{"{", "not json", "[1,2]", `"str"`, "null", `{"a":1} {"b":2}`, `{"a":1}x`} {
			wantErr(t, e.do(rt.method, rt.pattern, bad), http.StatusBadRequest, CodeBadJSON, "")
		}
		wantErr(t, e.do(rt.method, rt.pattern, big), http.StatusRequestEntityTooLarge, CodeTooLarge, "")
	}
}

func TestAuthComesBeforeSizeAndJSON(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", maxBody+10)
	wantErr(t, e.post("/api/vod/create", big, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, e.post("/api/vod/create", big), http.StatusRequestEntityTooLarge, CodeTooLarge, "")
}

func TestIDRoutes(t *testing.T) {
	e := newEnv(t)
	unknown := storage.NewID()
	for _, mod := range []string{"vod", "restream", "recording", "srt-servers", "rtmp-servers"} {
		verbs := []string{"update", "start", "stop", "getById", "remove"}
		if strings.HasSuffix(mod, "servers") {
			verbs = append(verbs, "getActiveStreams")
		}
		for _, verb := range verbs {
			method := http.MethodPost
			if verb == "remove" {
				method = http.MethodDelete
			}
			path := "/api/" + mod + "/" + verb
			wantErr(t, e.do(method, path, `{}`), http.StatusBadRequest, CodeValidation, "id")
			wantErr(t, e.do(method, path, nil), http.StatusBadRequest, CodeValidation, "id")
			wantErr(t, e.do(method, path, map[string]any{"id": "../../etc/passwd"}), http.StatusBadRequest, CodeValidation, "id")
			wantErr(t, e.do(method, path, map[string]any{"id": 12}), http.StatusBadRequest, CodeValidation, "id")
			wantErr(t, e.do(method, path, map[string]any{"id": unknown}), http.StatusNotFound, CodeNotFound, "")
			wantErr(t, e.do(method, path, map[string]any{"_id": unknown}), http.StatusNotFound, CodeNotFound, "")
		}
	}
}

func TestListRoutesTakeEmptyBodies(t *testing.T) {
	e := newEnv(t)
	for _, mod := range []string{"vod", "restream", "recording", "srt-servers", "rtmp-servers", "ports"} {
		for _, body := range []any{nil, "", "  ", "{}"} {
			res := e.post("/api/"+mod+"/getAll", body)
			if res.code != http.StatusOK || len(res.arr()) != 0 {
				t.Fatalf("%s getAll %q: %d %s", mod, body, res.code, res.raw)
			}
			res = e.post("/api/"+mod+"/getCount", body)
			if res.code != http.StatusOK || res.obj()["count"] != 0.0 {
				t.Fatalf("%s getCount: %d %s", mod, res.code, res.raw)
			}
		}
	}
}

func TestUnknownPathIsJSON404(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/api/nope", "/api/vod/nope", "/nope", "/api/recording/download/"} {
		wantErr(t, e.post(p, "{}"), http.StatusNotFound, CodeNotFound, "")
	}
}

func TestInternalErrorsSayNothingSecret(t *testing.T) {
	e := newEnv(t)
	e.store.failList = errSecret
	res := e.post("/api/vod/getAll", nil)
	wantErr(t, res, http.StatusInternalServerError, CodeInternal, "")
	if strings.Contains(string(res.raw), "s3cr3t") {
		t.Fatalf("internal detail leaked: %s", res.raw)
	}
}

var errSecret = &storeFailure{"database /var/lib/s3cr3t.db is locked"}

type storeFailure struct{ msg string }

func (e *storeFailure) Error() string { return e.msg }
