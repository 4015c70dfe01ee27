package testutil

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestAPI: calls carry JSON, the token and the method the route wants; Call decodes the
// answer; CreateOnPorts tries other ports after a 409 PORT_TAKEN.
func TestAPI(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	taken := 1 // the first create answers PORT_TAKEN
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("x-access-token")+" "+r.Header.Get("Content-Type")+" "+string(body))
		switch {
		case strings.HasSuffix(r.URL.Path, "/create") && taken > 0:
			taken--
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"success":false,"error":{"code":"PORT_TAKEN"}}`))
		case strings.HasSuffix(r.URL.Path, "/create"):
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"success":true,"id":"rec1"}`))
		default:
			_, _ = w.Write([]byte(`{"n":3}`))
		}
	}))
	defer srv.Close()

	a := API{T: t, Base: srv.URL, Token: "tok"}
	var out struct{ N int }
	a.Call("/api/vod/getAll", nil, http.StatusOK, &out)
	if out.N != 3 {
		t.Errorf("decoded %+v", out)
	}
	if st, _, err := a.Send("/api/vod/remove", map[string]any{"id": "x"}, ""); st != http.StatusOK || err != nil {
		t.Errorf("remove: %d %v", st, err)
	}
	id, ports := a.CreateOnPorts("vod", 2, func(p []int) map[string]any { return map[string]any{"vod_port": p[0], "other": p[1]} })
	if id != "rec1" || len(ports) != 2 || ports[0] == 0 || ports[1] == 0 {
		t.Errorf("CreateOnPorts = %q, %v", id, ports)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"POST /api/vod/getAll tok application/json ",
		`DELETE /api/vod/remove  application/json {"id":"x"}`,
		"POST /api/vod/create tok application/json ",
		"POST /api/vod/create tok application/json ",
	}
	if len(seen) != len(want) {
		t.Fatalf("requests %q", seen)
	}
	for i, w := range want {
		if !strings.HasPrefix(seen[i], w) {
			t.Errorf("request %d: %q, want it to start with %q", i, seen[i], w)
		}
	}
}
