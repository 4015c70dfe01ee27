package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/app"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// server is one run of sluice on a loopback port, driven through its API.
type server struct {
	t      *testing.T
	base   string
	token  string
	cancel context.CancelFunc
	done   chan error
}

// startServer starts sluice with its data in a temporary folder and logs in; it stops when
// the test ends.
func startServer(t *testing.T) *server {
	t.Helper()
	cfg, err := app.ParseConfig("sluice", []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminPassword = "correct-horse-battery"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	s := &server{t: t, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- app.Run(ctx, cfg, app.Options{OnReady: func(a net.Addr) { ready <- a }}) }()
	select {
	case a := <-ready:
		s.base = "http://" + a.String()
	case err := <-s.done:
		t.Fatalf("server exited at start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server not ready after 60 s")
	}
	t.Cleanup(s.stop)
	var login struct {
		Token string `json:"token"`
	}
	s.call("/api/auth/login", map[string]any{"email": "admin", "password": cfg.AdminPassword}, &login)
	if login.Token == "" {
		t.Fatal("login gave no token")
	}
	s.token = login.Token
	return s
}

// stop ends the server as SIGTERM would.
func (s *server) stop() {
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("server returned %v", err)
		}
	case <-time.After(15 * time.Second):
		s.t.Error("server did not stop within 15 s")
	}
}

// calls is the API as the test's admin calls it.
func (s *server) calls() testutil.API {
	return testutil.API{T: s.t, Base: s.base, Token: s.token}
}

// post sends body to an API path and returns the status and the answer.
func (s *server) post(path string, body any) (int, []byte) {
	s.t.Helper()
	return s.calls().Post(path, body)
}

// send sends req and returns the answer's status and body, and the error of reading it.
func (s *server) send(req *http.Request) (int, []byte, error) {
	s.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// call POSTs body to an API path, wants 200 or 201, and decodes the answer into out.
func (s *server) call(path string, body, out any) {
	s.t.Helper()
	status, raw := s.post(path, body)
	if status != http.StatusOK && status != http.StatusCreated {
		s.t.Fatalf("%s: status %d: %s", path, status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s: %v: %s", path, err, raw)
		}
	}
}

// createOnPorts creates a record whose body takes n free ports (testutil.API.CreateOnPorts)
// and returns its ID and its ports.
func (s *server) createOnPorts(module string, n int, body func(ports []int) map[string]any) (string, []int) {
	s.t.Helper()
	return s.calls().CreateOnPorts(module, n, body)
}

// download GETs an API path with the token and returns the body.
func (s *server) download(path string) []byte {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("x-access-token", s.token)
	status, b, err := s.send(req)
	if err != nil || status != http.StatusOK {
		s.t.Fatalf("GET %s: status %d, %v: %.200s", path, status, err, b)
	}
	return b
}

// recordedFile is an entry of a recording's recordedFiles.
type recordedFile = testutil.RecordedFile

// files returns a recording's files.
func (s *server) files(id string) []recordedFile {
	s.t.Helper()
	return s.calls().RecordedFiles(id)
}

// waitListening waits until something accepts TCP connections on the port.
func waitListening(t *testing.T, port int) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, fmt.Sprintf("port %d listening", port), func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}
