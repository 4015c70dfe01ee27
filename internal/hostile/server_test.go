package hostile

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/tooling"
)

// adminPassword is the admin's password in every server of the suite.
const adminPassword = "correct-horse-battery"

// Bounds of the harness itself.
const (
	// startTimeout is how long a server may take to answer /healthz after it starts.
	startTimeout = 30 * time.Second
	// keptLogLines is how many of the server's last log lines are kept (shown when a case fails).
	keptLogLines = 4000
	// stopTimeout is how long Cleanup waits after SIGTERM before it sends SIGKILL.
	stopTimeout = 15 * time.Second
)

// errExitedEarly is a server that ended with status 0 before it was ready.
var errExitedEarly = errors.New("exit status 0")

// options are how a case starts its server.
type options struct {
	data      string   // data folder; empty: a new one
	fdLimit   int      // open-file limit (RLIMIT_NOFILE, soft and hard); 0: inherited
	fileLimit int64    // file-size limit in bytes (RLIMIT_FSIZE), a multiple of 512; 0: inherited
	args      []string // more flags
}

// server is one sluice process started by a case.
type server struct {
	t     *testing.T
	opts  options
	addr  string // API address, 127.0.0.1:port
	base  string // http://addr
	debug string // its --debug-addr
	data  string
	cmd   *exec.Cmd
	pid   int
	token string
	api   *http.Client

	exited  chan struct{} // closed once the process ended and was reaped
	exitErr error

	logs tooling.Lines // the last keptLogLines lines
	mu   sync.Mutex
	seen map[string]int
}

// start starts the binary on a free loopback port with a fresh data folder (unless o.data),
// every listener of its records bound to 127.0.0.1, waits for /healthz and logs in as admin.
// The server is stopped when the test ends.
func start(t *testing.T, o options) *server {
	t.Helper()
	if o.data == "" {
		o.data = t.TempDir()
	}
	for attempt := 0; ; attempt++ {
		s, err := launch(t, o)
		if err == nil {
			return s
		}
		// Another program may take the free port before the server binds it.
		if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			t.Logf("server start: %v; another port", err)
			continue
		}
		t.Fatalf("server start: %v", err)
	}
}

func launch(t *testing.T, o options) (*server, error) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	debug := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	// The debug port (pprof, loopback only) lets the suite read the Go heap: memory the server
	// allocated whether it touched it or not (RSS counts only the pages written).
	args := append([]string{"serve", "--addr", addr, "--data", o.data, "--media-bind", "127.0.0.1", "--log-level", "info",
		"--debug-addr", debug}, o.args...)
	var cmd *exec.Cmd
	if o.fdLimit > 0 || o.fileLimit > 0 {
		// The shell sets the limits (soft and hard) and then becomes the server: same pid.
		// Its ulimit -f counts 512-byte blocks.
		script := `exec "$0" "$@"`
		if o.fdLimit > 0 {
			script = fmt.Sprintf("ulimit -n %d && %s", o.fdLimit, script)
		}
		if o.fileLimit > 0 {
			script = fmt.Sprintf("ulimit -f %d && %s", o.fileLimit/512, script)
		}
		cmd = exec.Command("/bin/sh", append([]string{"-c", script, sluiceBin}, args...)...)
	} else {
		cmd = exec.Command(sluiceBin, args...)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SLUICE_ADMIN_PASSWORD="+adminPassword)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{t: t, opts: o, addr: addr, base: "http://" + addr, debug: debug, data: o.data, cmd: cmd, pid: cmd.Process.Pid,
		exited: make(chan struct{}), seen: map[string]int{}, logs: tooling.Lines{Max: keptLogLines},
		api: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.keep(sc.Text())
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		<-logsDone
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("sluice exited at start (%w): %s", cmp.Or(s.exitErr, errExitedEarly), strings.Join(s.tail(20), "\n"))
		default:
		}
		if resp, err := s.api.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no /healthz within %v: %s", startTimeout, strings.Join(s.tail(20), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var login struct {
		Token string `json:"token"`
	}
	s.call("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, http.StatusOK, &login)
	s.token = login.Token
	return s, nil
}

// keep stores one log line, counting the ones that matter to every case.
func (s *server) keep(line string) {
	s.logs.Add(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []string{"panic", "fatal error", "level=ERROR"} {
		if strings.Contains(line, k) {
			s.seen[k]++
		}
	}
}

// tail returns the server's last n log lines.
func (s *server) tail(n int) []string { return s.logs.Tail(n) }

// logged returns the kept log lines that contain sub.
func (s *server) logged(sub string) []string { return s.logs.Containing(sub) }

// alive fails the test when the server process has ended or wrote a panic.
func (s *server) alive() {
	s.t.Helper()
	select {
	case <-s.exited:
		s.t.Fatalf("the server exited (%v); its last lines:\n%s", s.exitErr, strings.Join(s.tail(40), "\n"))
	default:
	}
	s.mu.Lock()
	panics := s.seen["panic"] + s.seen["fatal error"]
	s.mu.Unlock()
	if panics > 0 {
		s.t.Fatalf("the server logged %d panic lines: %q", panics, s.logged("panic"))
	}
	resp, err := s.api.Get(s.base + "/healthz")
	if err != nil {
		s.t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("healthz: %s", resp.Status)
	}
}

// stop sends SIGTERM, then SIGKILL after stopTimeout, and shows the server's last lines when
// the test failed.
func (s *server) stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if s.t.Failed() {
		s.t.Logf("server %s, last lines:\n%s", s.addr, strings.Join(s.tail(60), "\n"))
	}
}

// rss returns the server's resident size and its peak so far.
func (s *server) rss() (procfs.Status, error) { return procfs.ReadStatus(s.pid) }

// heap reads the server's Go heap allocated (runtime.MemStats.HeapAlloc) from /debug/vars on
// its debug port. A heap profile in text (/debug/pprof/heap?debug=1, read here before) costs the
// server the symbolising of every sampled allocation site: an execution trace of the
// start/remove race showed one read holding a processor for 415 ms.
func (s *server) heap() (int64, error) {
	resp, err := s.api.Get("http://" + s.debug + "/debug/vars")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var vars struct {
		Memstats struct{ HeapAlloc int64 } `json:"memstats"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&vars); err != nil {
		return 0, fmt.Errorf("memory statistics of %s: %w", s.debug, err)
	}
	if vars.Memstats.HeapAlloc <= 0 {
		return 0, fmt.Errorf("memory statistics of %s: no HeapAlloc", s.debug)
	}
	return vars.Memstats.HeapAlloc, nil
}

// children returns the live processes under the server.
func (s *server) children() []int {
	pids, _ := procfs.Descendants([]int{s.pid})
	if len(pids) == 0 {
		return nil
	}
	return pids[1:]
}

// calls is the API as the suite's admin calls it.
func (s *server) calls() testutil.API {
	return testutil.API{T: s.t, Base: s.base, Token: s.token, HTTP: s.api}
}

// post sends one API call with the admin token and returns its status and body.
func (s *server) post(path string, body any) (int, []byte, error) {
	return s.request(path, body, s.token)
}

// request sends one API call with token (none when empty): DELETE for remove, POST otherwise.
func (s *server) request(path string, body any, token string) (int, []byte, error) {
	return s.calls().Send(path, body, token)
}

// call sends one API call and fails the test unless it answers want; out (if not nil)
// receives the JSON answer.
func (s *server) call(path string, body any, want int, out any) {
	s.t.Helper()
	s.calls().Call(path, body, want, out)
}

// create creates a record of module and returns its id.
func (s *server) create(module string, body map[string]any) string {
	s.t.Helper()
	return s.calls().Create(module, body)
}

// createOnPort creates a record of module on a free port, trying another port when the one
// picked was taken meanwhile by another program of this busy machine.
func (s *server) createOnPort(module string, body func(port int) map[string]any) (string, int) {
	s.t.Helper()
	return s.calls().CreateOnPort(module, body)
}

// record reads one record of module.
func (s *server) record(module, id string) map[string]any {
	s.t.Helper()
	var rec map[string]any
	s.call("/api/"+module+"/getById", map[string]any{"id": id}, http.StatusOK, &rec)
	return rec
}

// waitState waits until the record's state is want.
func (s *server) waitState(module, id, want string, d time.Duration) {
	s.t.Helper()
	var got any
	deadline := time.Now().Add(d)
	for {
		if got = s.record(module, id)["state"]; got == want {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s %s: state %v after %v, want %s", module, id, got, d, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
