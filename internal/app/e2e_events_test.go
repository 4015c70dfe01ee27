package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// sseEvent is one event read from GET /api/events.
type sseEvent struct {
	ID   int64
	Type string
	Data map[string]any
}

func (e sseEvent) String() string {
	if e.Type == "state" {
		return fmt.Sprintf("%d:state=%v", e.ID, e.Data["state"])
	}
	return fmt.Sprintf("%d:%s", e.ID, e.Type)
}

// sseClient reads an event stream on loopback.
type sseClient struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan sseEvent
	status int
}

// follow opens GET /api/events?query with the token and, when lastID is not empty, a
// Last-Event-ID header.
func (ts *testServer) follow(query, lastID string) *sseClient {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.base+"/api/events?"+query, nil)
	req.Header.Set("x-access-token", ts.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		ts.t.Fatalf("GET /api/events: %v", err)
	}
	c := &sseClient{t: ts.t, cancel: cancel, events: make(chan sseEvent, 1024), status: resp.StatusCode}
	body := resp.Body
	if resp.StatusCode != http.StatusOK {
		body.Close()
		close(c.events)
		return c
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		body.Close()
		ts.t.Fatalf("event stream content type %q", ct)
	}
	go c.read(body)
	return c
}

// read parses the stream's frames into c.events until the body ends.
func (c *sseClient) read(body io.ReadCloser) {
	defer body.Close()
	defer close(c.events)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" {
				c.events <- cur
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.Data); err != nil {
				c.t.Errorf("event data %q: %v", line, err)
			}
		}
	}
}

// until reads events until one satisfies stop, and returns all read (that one included).
func (c *sseClient) until(d time.Duration, what string, stop func(sseEvent) bool) []sseEvent {
	c.t.Helper()
	var got []sseEvent
	deadline := time.After(d)
	for {
		select {
		case e, ok := <-c.events:
			if !ok {
				c.t.Fatalf("event stream ended waiting for %s; got %v", what, got)
			}
			got = append(got, e)
			if stop(e) {
				return got
			}
		case <-deadline:
			c.t.Fatalf("no %s within %v; got %v", what, d, got)
		}
	}
}

// upTo reads events until seen and those read hold n that keep accepts, and returns seen
// with the events read appended.
func (c *sseClient) upTo(d time.Duration, what string, seen []sseEvent, n int, keep func(sseEvent) bool) []sseEvent {
	c.t.Helper()
	count := 0
	for _, e := range seen {
		if keep(e) {
			count++
		}
	}
	if count >= n {
		return seen
	}
	return append(seen, c.until(d, what, func(e sseEvent) bool {
		if keep(e) {
			count++
		}
		return count >= n
	})...)
}

func (c *sseClient) close() { c.cancel() }

func isType(typ string) func(sseEvent) bool {
	return func(e sseEvent) bool { return e.Type == typ }
}

// eventTime is the time in an event's data.
func eventTime(t *testing.T, e sseEvent) time.Time {
	t.Helper()
	s, _ := e.Data["time"].(string)
	at, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	if err != nil {
		t.Fatalf("event %v: time %q: %v", e, s, err)
	}
	return at
}

func isState(s string) func(sseEvent) bool {
	return func(e sseEvent) bool { return e.Type == "state" && e.Data["state"] == s }
}

// srtListener starts ffmpeg as an SRT listener on port, sending the test source.
func srtListener(t *testing.T, port int) *testutil.Process {
	return testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "mode=listener"))...)
}

// TestEventStream follows a restream whose SRT caller input loses its peer (ffmpeg killed)
// and gets it back, through create, running, input drop, reconnecting, running, stop and
// remove; a second client that left midway resumes with Last-Event-ID and gets exactly the
// events it missed.
func TestEventStream(t *testing.T) {
	ts := startFFmpegServer(t)

	all := ts.follow("module=restream", "")
	defer all.close()
	early := ts.follow("module=restream", "")
	defer early.close()

	port := testutil.FreePort(t)
	src := srtListener(t, port)
	rs := ts.create("restream", restreamBody("events", urlInput("INPUT_TYPE_SRT_URL", fmt.Sprintf("srt://127.0.0.1:%d?latency=200&peeridletimeo=1000", port))))

	seen := all.until(30*time.Second, "running", isState("running"))
	if seen[0].Type != "created" || seen[0].Data["id"] != rs || seen[0].Data["name"] != "events" || seen[0].Data["module"] != "MODULE_RESTREAM" {
		t.Fatalf("first event %+v, want created of restream %s", seen[0], rs)
	}
	// The early client leaves here.
	left := early.until(10*time.Second, "running", isState("running"))
	early.close()
	lastSeen := left[len(left)-1].ID

	// The input drops: ffmpeg is killed, as a crashed encoder would be.
	_ = syscall.Kill(-src.Cmd.Process.Pid, syscall.SIGKILL)
	seen = append(seen, all.until(30*time.Second, "reconnecting", isState("reconnecting"))...)
	src = srtListener(t, port)
	seen = append(seen, all.until(60*time.Second, "running again", isState("running"))...)
	src.Stop()

	ts.call("/api/restream/stop", map[string]any{"id": rs}, http.StatusOK, nil)
	ts.call("/api/restream/remove", map[string]any{"id": rs}, http.StatusOK, nil)
	seen = append(seen, all.until(20*time.Second, "removed", func(e sseEvent) bool { return e.Type == "removed" })...)
	t.Logf("events: %v", seen)

	// In order: created … running, input_down, reconnecting (with the error), running,
	// stopped, state stopped, removed; ids increase.
	want := []func(sseEvent) bool{
		func(e sseEvent) bool { return e.Type == "created" },
		isState("running"),
		func(e sseEvent) bool { return e.Type == "input_down" },
		func(e sseEvent) bool { return isState("reconnecting")(e) && e.Data["last_error"] != "" },
		func(e sseEvent) bool { return e.Type == "input_up" },
		isState("running"),
		func(e sseEvent) bool { return e.Type == "stopped" },
		isState("stopped"),
		func(e sseEvent) bool { return e.Type == "removed" },
	}
	i := 0
	for k, e := range seen {
		if k > 0 && e.ID <= seen[k-1].ID {
			t.Errorf("event ids do not increase: %v then %v", seen[k-1], e)
		}
		if e.Data["id"] != rs || e.Data["event_id"] != float64(e.ID) || e.Data["type"] != e.Type || e.Data["time"] == nil {
			t.Errorf("event %v: data %v", e, e.Data)
		}
		if i < len(want) && want[i](e) {
			i++
		}
	}
	if i < len(want) {
		t.Fatalf("the events miss step %d of the sequence: %v", i, seen)
	}

	// Resume: exactly the events after lastSeen, in order, then live ones.
	resumed := ts.follow("module=restream", strconv.FormatInt(lastSeen, 10))
	defer resumed.close()
	last := seen[len(seen)-1].ID
	got := resumed.until(10*time.Second, "the replay", func(e sseEvent) bool { return e.ID >= last })
	var wantIDs, gotIDs []int64
	for _, e := range seen {
		if e.ID > lastSeen {
			wantIDs = append(wantIDs, e.ID)
		}
	}
	for _, e := range got {
		gotIDs = append(gotIDs, e.ID)
	}
	if fmt.Sprint(gotIDs) != fmt.Sprint(wantIDs) {
		t.Fatalf("replay after %d: ids %v, want %v", lastSeen, gotIDs, wantIDs)
	}
	// The same with the query parameter, filtered to one type.
	q := ts.follow("id="+rs+"&type=removed&last_event_id="+strconv.FormatInt(lastSeen, 10), "")
	defer q.close()
	if e := q.until(10*time.Second, "removed", func(sseEvent) bool { return true }); e[0].Type != "removed" || e[0].ID != last {
		t.Fatalf("filtered replay: %v, want removed %d", e, last)
	}
}
