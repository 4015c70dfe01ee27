package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseRequest is what the scenario server saw of one request.
type sseRequest struct {
	at          time.Time
	ended       time.Time
	token       string
	lastEventID string
	rawQuery    string
	clientGone  bool // the handler returned because the client closed the connection
}

// sseServer serves the scenarios of sse_check.mjs at /s/<name> and logs their requests.
type sseServer struct {
	mu   sync.Mutex
	reqs map[string][]*sseRequest
}

// log copies the requests of scenario name.
func (s *sseServer) log(name string) []sseRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sseRequest
	for _, r := range s.reqs[name] {
		out = append(out, *r)
	}
	return out
}

// waitGone blocks until the client closes the request or 10 s pass.
func (s *sseServer) waitGone(r *http.Request, req *sseRequest) {
	select {
	case <-r.Context().Done():
		s.mu.Lock()
		req.clientGone = true
		s.mu.Unlock()
	case <-time.After(10 * time.Second):
	}
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/s/")
	req := &sseRequest{at: time.Now(), token: r.Header.Get("x-access-token"), lastEventID: r.Header.Get("Last-Event-ID"), rawQuery: r.URL.RawQuery}
	s.mu.Lock()
	s.reqs[name] = append(s.reqs[name], req)
	n := len(s.reqs[name])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		req.ended = time.Now()
		s.mu.Unlock()
	}()
	if name == "auth" || req.token != "tok" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"success":false,"error":{"code":"UNAUTHORIZED","message":"no"}}`))
		return
	}
	if name == "busy" && n == 1 {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"success":false,"error":{"code":"UNAVAILABLE","message":"too many event stream clients"}}`))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(s string) {
		_, _ = w.Write([]byte(s))
		_ = rc.Flush()
	}
	switch {
	case name == "split" && n == 1:
		// Every byte in its own write: lines, events and UTF-8 sequences cut everywhere;
		// LF, CRLF and CR line ends; a comment; an event without an id; a field without a
		// value; an unknown field; and an event cut off before its blank line.
		body := "\uFEFFretry: 300\n: hello\n\nid: 1\nevent: state\ndata: {\"a\":\"café ☕\"}\n\n" +
			"event: server_stats\r\ndata: {\"s\":\r\ndata: 2}\r\n\r\n" +
			"id: 2\revent: created\rdata: x\r\r" +
			"data: plain\n\n" +
			"id: 7\nevent: removed\ndata\n\n" +
			"unknown: field\nid: 9\nevent: cut\ndata: never ends"
		for i := 0; i < len(body); i++ {
			send(body[i : i+1])
		}
	case name == "split":
		send("id: 8\nevent: state\ndata: {\"resumed\":true}\n\n")
		s.waitGone(r, req)
	case name == "big" && n == 1:
		send("id: 1\nevent: a\ndata: ok\n\n")
		send("data: " + strings.Repeat("x", 70_000))
		s.waitGone(r, req)
	case name == "big" && n == 2:
		send(strings.Repeat("data: "+strings.Repeat("y", 1000)+"\n", 300))
		s.waitGone(r, req)
	case name == "stall" && n == 1:
		send("id: 1\nevent: a\ndata: ok\n\n")
		s.waitGone(r, req)
	default:
		send(fmt.Sprintf("id: %d\nevent: b\ndata: after\n\n", 10+n))
		s.waitGone(r, req)
	}
}

type sseEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data string `json:"data"`
}

type sseScenario struct {
	Events   []sseEvent `json:"events"`
	Statuses []string   `json:"statuses"`
	Refused  int        `json:"refused"`
	TimedOut bool       `json:"timedOut"`
	MS       int        `json:"ms"`
}

// TestEventStreamReader runs the console's event stream reader (ui/js/sse.js, what the
// console follows /api/events with) in Node against a real HTTP server: the format's corners
// byte by byte, a resume with Last-Event-ID naming the last whole event, the server's retry
// delay, the caps on a line and an event, a 503's Retry-After, a 401 that stops it, and a
// silent connection given up on. The token travels in the header only.
func TestEventStreamReader(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run the console's scripts (make deps installs it): %v", err)
	}
	srv := &sseServer{reqs: map[string][]*sseRequest{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer ts.CloseClientConnections()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "sse_check.mjs"), "--base", ts.URL,
		"--module", filepath.Join("ui", "js", "sse.js"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node sse_check.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res struct {
		Scenarios map[string]sseScenario `json:"scenarios"`
		Parser    map[string]string      `json:"parser"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("harness output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for name, sc := range res.Scenarios {
		t.Logf("%s: %d ms, statuses %q, events %+v", name, sc.MS, sc.Statuses, sc.Events)
		if sc.TimedOut {
			t.Errorf("%s: timed out", name)
		}
	}
	for _, name := range []string{"split", "big", "busy", "auth", "stall"} {
		for i, r := range srv.log(name) {
			if r.token != "tok" || r.rawQuery != "" {
				t.Errorf("%s request %d: token header %q, query %q; want the token in the header only", name, i+1, r.token, r.rawQuery)
			}
		}
	}

	split := res.Scenarios["split"]
	want := []sseEvent{
		{"1", "state", `{"a":"café ☕"}`}, {"1", "server_stats", "{\"s\":\n2}"}, {"2", "created", "x"},
		{"2", "message", "plain"}, {"7", "removed", ""}, {"8", "state", `{"resumed":true}`},
	}
	if !reflect.DeepEqual(split.Events, want) {
		t.Errorf("split: events\n%+v\nwant\n%+v", split.Events, want)
	}
	if reqs := srv.log("split"); len(reqs) != 2 {
		t.Errorf("split: %d requests, want 2", len(reqs))
	} else {
		if reqs[0].lastEventID != "" || reqs[1].lastEventID != "7" {
			t.Errorf("split: Last-Event-ID %q then %q, want none then 7 (the last whole event's)", reqs[0].lastEventID, reqs[1].lastEventID)
		}
		// retry: 300, less at most a quarter.
		if gap := reqs[1].at.Sub(reqs[0].ended); gap < 220*time.Millisecond {
			t.Errorf("split: reconnected %v after the drop, want ≥ 225 ms (the server's retry: 300)", gap)
		}
	}
	if s := strings.Join(split.Statuses, " | "); !strings.HasPrefix(s, "up | down: the server ended the stream | up") {
		t.Errorf("split: statuses %q", s)
	}

	big := res.Scenarios["big"]
	if len(big.Events) != 2 || big.Events[0].Data != "ok" || big.Events[1].ID != "13" || big.Events[1].Type != "b" {
		t.Errorf("big: events %+v, want a, then b after two refused connections", big.Events)
	}
	if s := strings.Join(big.Statuses, " | "); !strings.Contains(s, "down: a line of over 65536 characters") ||
		!strings.Contains(s, "down: an event of over 262144 characters") {
		t.Errorf("big: statuses %q, want the line cap and then the event cap", s)
	}
	if reqs := srv.log("big"); len(reqs) != 3 || !reqs[0].clientGone || !reqs[1].clientGone || reqs[1].lastEventID != "1" {
		t.Errorf("big: %d requests; want 3, the first two closed by the client, the second resuming after 1", len(reqs))
	}

	if reqs := srv.log("busy"); len(reqs) != 2 {
		t.Errorf("busy: %d requests, want 2", len(reqs))
	} else if gap := reqs[1].at.Sub(reqs[0].ended); gap < 950*time.Millisecond {
		t.Errorf("busy: tried again %v after a 503 with Retry-After: 1", gap)
	}

	if auth := res.Scenarios["auth"]; auth.Refused != http.StatusUnauthorized || len(srv.log("auth")) != 1 ||
		auth.Statuses[len(auth.Statuses)-1] != "closed: stopped" {
		t.Errorf("auth: refused %d after %d requests, statuses %q; want 401 after 1 request and the stream stopped",
			auth.Refused, len(srv.log("auth")), auth.Statuses)
	}

	stall := res.Scenarios["stall"]
	if s := strings.Join(stall.Statuses, " | "); len(stall.Events) != 2 || !strings.Contains(s, "down: no data for 600 ms") {
		t.Errorf("stall: events %+v, statuses %q; want the silent connection given up after 600 ms", stall.Events, s)
	}
	if reqs := srv.log("stall"); len(reqs) != 2 || !reqs[0].clientGone || reqs[1].lastEventID != "1" {
		t.Errorf("stall: %d requests, want 2, the first closed by the client", len(reqs))
	}

	for name, want := range map[string]string{
		"oneLine": "SSEError: a line of 206 characters", "pieces": "SSEError: a line of over 100 characters",
		"event": "SSEError: an event of over 1000 characters",
	} {
		if !strings.HasPrefix(res.Parser[name], want) {
			t.Errorf("parser cap %s: %q, want %q", name, res.Parser[name], want)
		}
	}
}
