package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// benchPassword is the admin password of the bench's throw-away sluice instances.
const benchPassword = "bench-password-0123"

// benchMetricsToken turns the bench's sluice instances' /metrics on (--metrics-token): an
// endpoint nobody scrapes costs nothing, and player-srt-scraped scrapes it.
const benchMetricsToken = "bench-metrics-token-0123"

// Sluice is a running sluice server with a logged-in API client.
type Sluice struct {
	*Proc
	Addr      string // API address, 127.0.0.1:port
	DebugAddr string // pprof address, empty when off
	dataDir   string
	token     string
	client    *http.Client
}

// StartSluice starts bin with a fresh data folder, waits for /healthz and logs in.
func StartSluice(ctx context.Context, bin string, debug bool) (*Sluice, error) {
	dir, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return nil, fmt.Errorf("sluice data folder: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Sluice{Addr: fmt.Sprintf("127.0.0.1:%d", port), dataDir: dir, client: &http.Client{Timeout: 10 * time.Second}}
	env := []string{"SLUICE_ADDR=" + s.Addr, "SLUICE_DATA=" + dir, "SLUICE_ADMIN_PASSWORD=" + benchPassword,
		"SLUICE_METRICS_TOKEN=" + benchMetricsToken}
	if debug {
		dp, err := freePort()
		if err != nil {
			return nil, err
		}
		s.DebugAddr = fmt.Sprintf("127.0.0.1:%d", dp)
		env = append(env, "SLUICE_DEBUG_ADDR="+s.DebugAddr)
	}
	s.Proc, err = startProc("sluice", bin, env, "serve")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// ready waits for /healthz and logs in.
func (s *Sluice) ready(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := s.client.Get("http://" + s.Addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if s.Exited() || time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = errors.New("/healthz does not answer 200")
			}
			return fmt.Errorf("sluice on %s not ready: %w; output: %s", s.Addr, err, tail(s.Output()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var login struct {
		Token string `json:"token"`
	}
	if err := s.Call("/api/auth/login", map[string]any{"email": "admin", "password": benchPassword}, &login); err != nil {
		return err
	}
	s.token = login.Token
	return nil
}

// Call posts body to the API path and decodes the JSON answer into out (when not nil).
func (s *Sluice) Call(path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("sluice %s: %w", path, err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("sluice %s: %w", path, err)
	}
	req.Header.Set("content-type", "application/json")
	if s.token != "" {
		req.Header.Set("x-access-token", s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("sluice %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("sluice %s: %w", path, err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("sluice %s: status %d: %s", path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("sluice %s: answer %q: %w", path, raw, err)
	}
	return nil
}

// Create creates a record in module (vod, restream, recording, srt-servers) and returns its id.
func (s *Sluice) Create(module string, body map[string]any) (string, error) {
	var c struct {
		ID string `json:"id"`
	}
	if err := s.Call("/api/"+module+"/create", body, &c); err != nil {
		return "", err
	}
	return c.ID, nil
}

// Record reads one record of module.
func (s *Sluice) Record(module, id string) (map[string]any, error) {
	var rec map[string]any
	err := s.Call("/api/"+module+"/getById", map[string]any{"id": id}, &rec)
	return rec, err
}

// DropWarnings counts the log lines where sluice reports a reader that dropped units or was
// closed for being too slow.
func (s *Sluice) DropWarnings() int {
	out := s.Output()
	return strings.Count(out, "dropped units") + strings.Count(out, "too slow")
}

// Stop stops sluice (SIGTERM, its graceful path) and removes its data folder.
func (s *Sluice) Stop() {
	s.Proc.Stop(syscall.SIGTERM, 12*time.Second)
	os.RemoveAll(s.dataDir)
}

// tail is the end of a process's output, for error messages.
func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
