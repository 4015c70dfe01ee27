package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteGate: with one write worker, a start that is running holds the next start back
// (its Start is not called) while reads are answered at once; the held start runs when the
// first ends; a held start whose client goes away never runs.
func TestWriteGate(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.WriteWorkers = 1 })
	ids := make([]string, 3)
	for i := range ids {
		b := playerBody("gate-"+string(rune('a'+i)), 8000+10*i)
		b["active"] = false
		ids[i] = e.mustCreate("vod", b)
	}
	entered := make(chan string, 3)
	release := make(chan struct{})
	e.procs.startFn = func(id string) error {
		entered <- id
		<-release
		return nil
	}
	done := make(chan int, 2)
	go func() { done <- e.post("/api/vod/start", map[string]any{"id": ids[0]}).code }()
	if got := <-entered; got != ids[0] {
		t.Fatalf("first start ran %s, want %s", got, ids[0])
	}
	go func() { done <- e.post("/api/vod/start", map[string]any{"id": ids[1]}).code }()

	// A client that gives up while held: its start never runs.
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodPost, "/api/vod/start", strings.NewReader(`{"id":"`+ids[2]+`"}`)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-access-token", e.token)
	gaveUp := make(chan struct{})
	go func() {
		e.h.ServeHTTP(httptest.NewRecorder(), req)
		close(gaveUp)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-gaveUp:
	case <-time.After(5 * time.Second):
		t.Fatal("a held start whose client went away did not end")
	}

	// Reads are not held behind the running start.
	t0 := time.Now()
	if res := e.post("/api/vod/getAll", map[string]any{}); res.code != http.StatusOK {
		t.Fatalf("getAll while a start runs: %d %s", res.code, res.raw)
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("getAll took %v while a start ran", took)
	}
	select {
	case id := <-entered:
		t.Fatalf("start of %s ran while another held the only write worker", id)
	default:
	}

	close(release)
	if got := <-entered; got != ids[1] {
		t.Fatalf("second start ran %s, want %s", got, ids[1])
	}
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("start answered %d", code)
		}
	}
	select {
	case id := <-entered:
		t.Fatalf("start of %s ran after its client went away", id)
	default:
	}
}
