package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/webhooks"
)

const hookSecret = "a-webhook-secret-of-some-length"

// receiver is a webhook target on loopback: it verifies each delivery's signature, answers
// 500 to the first failFirst requests, and keeps each delivery by its idempotency id.
type receiver struct {
	t         *testing.T
	secret    string
	failFirst int

	mu       sync.Mutex
	requests int
	bad      []string                  // signature failures
	byID     map[string]map[string]any // delivery id -> event
	dups     int                       // deliveries received again after a 2xx
}

func newReceiver(t *testing.T, secret string, failFirst int) *receiver {
	return &receiver{t: t, secret: secret, failFirst: failFirst, byID: map[string]map[string]any{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	if err := webhooks.Verify(rc.secret, r.Header.Get(webhooks.SignatureHeader), body, 5*time.Minute, time.Now()); err != nil {
		rc.bad = append(rc.bad, err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if rc.requests <= rc.failFirst {
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil || ev["type"] != r.Header.Get(webhooks.EventHeader) {
		rc.bad = append(rc.bad, fmt.Sprintf("body %s: %v", body, err))
	}
	id := r.Header.Get(webhooks.DeliveryHeader)
	if _, seen := rc.byID[id]; seen {
		rc.dups++
	}
	rc.byID[id] = ev
	w.WriteHeader(http.StatusNoContent)
}

// events returns the deliveries received, deduplicated, by event type and record id.
func (rc *receiver) events() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for _, ev := range rc.byID {
		out[fmt.Sprint(ev["type"], "/", ev["id"])]++
	}
	return out
}

func (rc *receiver) check() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		rc.t.Errorf("receiver refused deliveries: %v", rc.bad)
	}
}

type hookRead struct {
	Secret    *string `json:"secret"`
	SecretSet bool    `json:"secret_set"`
	Delivery  struct {
		Pending, Delivered, Failed int
		LastError                  string `json:"last_error"`
	} `json:"delivery"`
}

func (ts *testServer) hook(id string) hookRead {
	ts.t.Helper()
	var h hookRead
	ts.call("/api/webhooks/getById", map[string]any{"id": id}, http.StatusOK, &h)
	return h
}

// cheapRestream is a restream created inactive: its events cost no media.
func cheapRestream(name string) map[string]any {
	b := restreamBody(name, urlInput("INPUT_TYPE_SRT_URL", "srt://127.0.0.1:9"))
	b["active"] = false
	return b
}

// TestWebhooksRetryUntilDelivered: a receiver that answers 500 five times, then 200, gets
// every event it asked for exactly once by idempotency id, each signed; the module validates
// like the others and never returns the secret.
func TestWebhooksRetryUntilDelivered(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SLUICE_WEBHOOK_RETRY_MIN": "50ms", "SLUICE_WEBHOOK_RETRY_MAX": "200ms"}
	ts := startServerEnv(t, t.TempDir(), nil, func(k string) string { return env[k] })
	defer ts.stop()
	rc := newReceiver(t, hookSecret, 5)
	srv := httptest.NewServer(rc)
	defer srv.Close()

	var e struct {
		Error struct{ Code, Field string } `json:"error"`
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "url": "ftp://127.0.0.1/", "secret": hookSecret}, "url"},
		{map[string]any{"name": "x", "url": srv.URL, "secret": "short"}, "secret"},
		{map[string]any{"name": "x", "url": srv.URL, "secret": hookSecret, "event_types": []string{"created", "nope"}}, "event_types.1"},
		{map[string]any{"name": "x", "url": srv.URL, "secret": hookSecret, "filter_module": "MODULE_NOPE"}, "filter_module"},
		{map[string]any{"name": "x", "url": srv.URL}, "secret"},
	} {
		ts.call("/api/webhooks/create", c.body, http.StatusBadRequest, &e)
		if e.Error.Code != "VALIDATION" || e.Error.Field != c.field {
			t.Errorf("create %v: %+v, want VALIDATION on %s", c.body, e.Error, c.field)
		}
	}
	hook := ts.create("webhooks", map[string]any{"name": "backend", "url": srv.URL, "secret": hookSecret,
		"event_types": []string{"created", "updated", "removed"}, "filter_module": "MODULE_RESTREAM"})
	ts.call("/api/webhooks/create", map[string]any{"name": "backend", "url": srv.URL, "secret": hookSecret}, http.StatusConflict, &e)
	if e.Error.Code != "NAME_TAKEN" {
		t.Errorf("duplicate name: %+v", e.Error)
	}
	if h := ts.hook(hook); h.Secret != nil || !h.SecretSet {
		t.Errorf("getById shows the secret or not secret_set: %+v", h)
	}

	var ids []string
	for i := range 3 {
		ids = append(ids, ts.create("restream", cheapRestream("hooked-"+strconv.Itoa(i))))
	}
	ts.call("/api/restream/update", map[string]any{"id": ids[0], "restream_name": "hooked-renamed"}, http.StatusOK, nil)
	ts.call("/api/restream/remove", map[string]any{"id": ids[1]}, http.StatusOK, nil)
	// A player's creation is not asked for (filter_module).
	ts.create("vod", map[string]any{"vod_name": "not-hooked", "vod_port": testutil.FreePort(t), "active": false,
		"input": tinyTestVideo(), "initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 2, "hls_fragment_length": 20, "dash_fragment_size": 2, "dash_fragment_length": 20})
	ts.call("/api/webhooks/test", map[string]any{"id": hook}, http.StatusOK, nil)

	want := map[string]int{"ping/" + hook: 1, "updated/" + ids[0]: 1, "removed/" + ids[1]: 1}
	for _, id := range ids {
		want["created/"+id] = 1
	}
	testutil.Eventually(t, 30*time.Second, "every event delivered", func() bool { return len(rc.events()) >= len(want) })
	time.Sleep(300 * time.Millisecond) // anything delivered twice would show now
	if got := rc.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delivered %v, want each of %v once", got, want)
	}
	rc.check()
	if rc.requests < len(want)+5 {
		t.Errorf("%d requests: the five 500s were not retried", rc.requests)
	}
	var h hookRead
	testutil.Eventually(t, 10*time.Second, "delivery status", func() bool {
		h = ts.hook(hook)
		return h.Delivery.Delivered == len(want) && h.Delivery.Pending == 0
	})
	if h.Delivery.Failed != 0 || h.Delivery.LastError != "" {
		t.Errorf("delivery status %+v", h.Delivery)
	}

	// A receiver with the wrong secret refuses every delivery; sluice keeps retrying and says why.
	wrong := newReceiver(t, "not-the-secret-at-all-really", 0)
	bad := httptest.NewServer(wrong)
	defer bad.Close()
	ts.call("/api/webhooks/update", map[string]any{"id": hook, "url": bad.URL}, http.StatusOK, nil)
	ts.call("/api/webhooks/test", map[string]any{"id": hook}, http.StatusOK, nil)
	testutil.Eventually(t, 10*time.Second, "a refused delivery", func() bool {
		h = ts.hook(hook)
		return h.Delivery.LastError != "" && h.Delivery.Pending == 1
	})
	wrong.mu.Lock()
	nbad := len(wrong.bad)
	wrong.mu.Unlock()
	if nbad == 0 || len(wrong.events()) != 0 {
		t.Fatalf("wrong secret: %d refusals, %v accepted", nbad, wrong.events())
	}
	t.Logf("wrong secret: %s", h.Delivery.LastError)
}

// TestWebhooksSurviveKill9: deliveries pending for a receiver that is down survive a kill -9
// of the server; after the restart, once the receiver is up, every one arrives.
func TestWebhooksSurviveKill9(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	env := []string{"SLUICE_WEBHOOK_RETRY_MIN=100ms", "SLUICE_WEBHOOK_RETRY_MAX=300ms"}
	c := startChild(t, addr, data, env...)
	rport := testutil.FreePort(t)
	hook := c.ts.create("webhooks", map[string]any{"name": "down", "url": fmt.Sprintf("http://127.0.0.1:%d/hook", rport),
		"secret": hookSecret, "event_types": []string{"created"}, "filter_module": "MODULE_RESTREAM"})
	var ids []string
	for i := range 4 {
		ids = append(ids, c.ts.create("restream", cheapRestream("crash-"+strconv.Itoa(i))))
	}
	testutil.Eventually(t, 15*time.Second, "deliveries pending after failed attempts", func() bool {
		h := c.ts.hook(hook)
		return h.Delivery.Pending == len(ids) && h.Delivery.LastError != ""
	})
	c.kill()

	c = startChild(t, addr, data, env...)
	rc := newReceiver(t, hookSecret, 0)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", rport))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	testutil.Eventually(t, 20*time.Second, "every pending delivery", func() bool { return len(rc.events()) >= len(ids) })
	want := map[string]int{}
	for _, id := range ids {
		want["created/"+id] = 1
	}
	if got := rc.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	rc.check()
}
