package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// tinyTestVideo is a test-stream input cheap enough to run dozens of at once: every record
// using it runs one ffmpeg child.
func tinyTestVideo() map[string]any {
	return map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 160,
		"resolution_height": 90, "encoding_rate": 10, "test_video_bitrate": 100}
}

// try sends one API call and returns its status, without judging it.
func (ts *testServer) try(path string, body any) int {
	ts.t.Helper()
	st, _, err := ts.calls().Send(path, body, ts.token)
	if err != nil {
		ts.t.Errorf("%s: %v", path, err)
		return 0
	}
	return st
}

// post sends one API call and returns its status and body, without judging them.
func (ts *testServer) post(path string, body any) (int, []byte) {
	ts.t.Helper()
	return ts.calls().Post(path, body)
}

// createOnFreePort creates a record of module on a free port, picking another port when the
// one picked is taken (testutil.API.CreateOnPorts).
func (ts *testServer) createOnFreePort(module string, body func(port int) map[string]any) (string, int) {
	ts.t.Helper()
	return ts.calls().CreateOnPort(module, body)
}

// checkNothingLeft proves that once every record is removed the server holds nothing of them:
// no child process, every port bindable again, no claim but the API's.
func checkNothingLeft(t *testing.T, ts *testServer, ports []int) {
	t.Helper()
	if kids := testutil.Children(os.Getpid()); len(kids) > 0 {
		t.Errorf("child processes left after every record was removed: %v", kids)
	}
	mine, _, err := procfs.Listeners(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		switch {
		case err == nil:
			l.Close()
		case mine[p]:
			t.Errorf("port %d still bound by the server after every record was removed: %v", p, err)
		default:
			t.Logf("port %d taken by another program meanwhile: %v", p, err)
		}
	}
	var claims []map[string]any
	ts.call("/api/ports/getAll", nil, http.StatusOK, &claims)
	for _, c := range claims {
		if c["module_name"] != "MODULE_API" {
			t.Errorf("claim left after every record was removed: %v", c)
		}
	}
}

// TestStartRemovePairs: 40 players are started and removed at the same time, each by its own
// pair of requests. Once both answered, nothing of any player is left, and a new player can
// take each port at once.
func TestStartRemovePairs(t *testing.T) {
	ts := startFFmpegServer(t)
	const pairs = 40
	ids := make([]string, pairs)
	ports := make([]int, pairs)
	for i := range pairs {
		ids[i], ports[i] = ts.createOnFreePort("vod", func(port int) map[string]any {
			body := playerBody(fmt.Sprintf("pair-%d", i), port, tinyTestVideo())
			body["active"] = false
			return body
		})
	}
	won := testutil.StartRemoveAtOnce(t, "", "vod", ids, ts.try)
	t.Logf("%d of %d starts came before their remove", won, pairs)
	checkNothingLeft(t, ts, ports)
	// Each port can be taken again at once. Only a program other than this one may hold one
	// meanwhile (this machine is busy); the server itself must hold none.
	mine, _, err := procfs.Listeners(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pairs {
		body := playerBody(fmt.Sprintf("again-%d", i), ports[i], tinyTestVideo())
		body["active"] = false
		st, raw := ts.post("/api/vod/create", body)
		switch {
		case st == http.StatusCreated:
		case st == http.StatusConflict && strings.Contains(string(raw), "bound by another program") &&
			!mine[ports[i]]:
			t.Logf("port %d taken by another program meanwhile", ports[i])
		default:
			t.Errorf("create again on port %d: status %d: %s", ports[i], st, raw)
		}
	}
}

// hammerSlot is one port that goroutines fight over: the record on it is started, stopped,
// updated, removed and created again.
type hammerSlot struct {
	module string
	port   int
	mu     sync.Mutex
	id     string
	gen    int
}

func (s *hammerSlot) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

func (s *hammerSlot) body(name string) map[string]any {
	switch s.module {
	case "vod":
		return playerBody(name, s.port, tinyTestVideo())
	case "recording":
		return recordingBody(name, listenInput("INPUT_TYPE_RTMP_LISTEN", s.port, "tcp"))
	}
	return restreamBody(name, listenInput("INPUT_TYPE_RTMP_LISTEN", s.port, "tcp"))
}

// TestLifecycleHammer: 16 goroutines start, stop, update, remove and re-create records on a
// few ports for a bounded time; then every record is removed. Nothing may be left: no ffmpeg
// child, no bound port, no claim, and no goroutine beyond the baseline.
func TestLifecycleHammer(t *testing.T) {
	ts := startFFmpegServer(t)
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	baseG := runtime.NumGoroutine()

	var slots []*hammerSlot
	for i := range 6 {
		mod := []string{"vod", "vod", "vod", "recording", "restream", "vod"}[i]
		s := &hammerSlot{module: mod}
		s.id, s.port = ts.createOnFreePort(mod, func(port int) map[string]any {
			s.port = port
			return s.body(fmt.Sprintf("slot-%d", i))
		})
		slots = append(slots, s)
	}
	var ops, bad atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(10 * time.Second)
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 13))
			for time.Now().Before(deadline) {
				s := slots[rng.IntN(len(slots))]
				id := s.current()
				var path string
				var body map[string]any
				switch rng.IntN(5) {
				case 0:
					path, body = "start", map[string]any{"id": id}
				case 1:
					path, body = "stop", map[string]any{"id": id}
				case 2:
					path, body = "update", map[string]any{"id": id, "active": rng.IntN(2) == 0}
				case 3:
					path, body = "update", map[string]any{"id": id, "active": true}
				case 4:
					// A remove and a create on the same port.
					st := ts.try("/api/"+s.module+"/remove", map[string]any{"id": id})
					ops.Add(1)
					if st != http.StatusOK && st != http.StatusNotFound {
						bad.Add(1)
						t.Errorf("%s remove: status %d", s.module, st)
					}
					s.mu.Lock()
					s.gen++
					name := fmt.Sprintf("slot-%d-%d", s.port, s.gen)
					s.mu.Unlock()
					var c created
					b, _ := json.Marshal(s.body(name))
					req, _ := http.NewRequest(http.MethodPost, ts.base+"/api/"+s.module+"/create", bytes.NewReader(b))
					req.Header.Set("x-access-token", ts.token)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Errorf("create: %v", err)
						continue
					}
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					ops.Add(1)
					switch resp.StatusCode {
					case http.StatusCreated:
						_ = json.Unmarshal(raw, &c)
						s.mu.Lock()
						s.id = c.ID
						s.mu.Unlock()
					case http.StatusConflict: // another goroutine re-created this slot first
					default:
						bad.Add(1)
						t.Errorf("%s create: status %d: %s", s.module, resp.StatusCode, raw)
					}
					continue
				}
				st := ts.try("/api/"+s.module+"/"+path, body)
				ops.Add(1)
				if st != http.StatusOK && st != http.StatusNotFound {
					bad.Add(1)
					t.Errorf("%s %s: status %d", s.module, path, st)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("hammer: %d requests, %d unexpected answers", ops.Load(), bad.Load())

	var ports []int
	for _, mod := range []string{"vod", "recording", "restream"} {
		var all []map[string]any
		ts.call("/api/"+mod+"/getAll", nil, http.StatusOK, &all)
		for _, r := range all {
			ts.call("/api/"+mod+"/remove", map[string]any{"id": r["id"]}, http.StatusOK, nil)
		}
	}
	for _, s := range slots {
		ports = append(ports, s.port)
	}
	checkNothingLeft(t, ts, ports)
	http.DefaultClient.CloseIdleConnections()
	settled(t, "goroutines", baseG, 2, runtime.NumGoroutine, nil)
}
