package app

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/tooling"
)

// childServer is the server running as a separate process (this test binary in server mode).
type childServer struct {
	cmd *exec.Cmd
	ts  *testServer

	logs tooling.Lines // the server's last 100 000 lines
}

// logged returns the server's log lines that contain s.
func (c *childServer) logged(s string) []string { return c.logs.Containing(s) }

// startChild starts the server process on addr with data, and logs in.
func startChild(t *testing.T, addr, data string, env ...string) *childServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), childServerEnv+"=1", "SLUICE_ADDR="+addr, "SLUICE_DATA="+data,
		"SLUICE_ADMIN_PASSWORD=correct-horse-battery", "SLUICE_LOG_LEVEL=debug")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childServer{cmd: cmd, ts: &testServer{t: t, base: "http://" + addr}, logs: tooling.Lines{Max: 100000}}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "repair") || strings.Contains(line, "level=ERROR") {
				t.Log("server:", line)
			}
			c.logs.Add(line)
		}
	}()
	t.Cleanup(func() { c.kill() })
	testutil.Eventually(t, 60*time.Second, "server process ready", func() bool {
		resp, err := http.Get(c.ts.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	var login struct {
		Token string `json:"token"`
	}
	c.ts.call("/api/auth/login", map[string]any{"email": "admin", "password": "correct-horse-battery"}, http.StatusOK, &login)
	c.ts.token = login.Token
	return c
}

// kill ends the process with SIGKILL, as a crash or power loss would.
func (c *childServer) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		_ = c.cmd.Wait()
	}
}

// TestRecordingSurvivesKill9 kills the server 8 s into an mp4 recording and starts it again:
// the file is repaired, keeps at least 6.5 s, and the recording runs again.
func TestRecordingSurvivesKill9(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	c := startChild(t, addr, data)
	port := testutil.FreePort(t)
	srv := c.ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, c.ts, "/api/rtmp-servers/getById", srv, "running")
	rec := c.ts.create("recording", recordingBody("crash", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}))
	waitState(t, c.ts, "/api/recording/getById", rec, "waiting")

	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam"))...)
	var started time.Time
	testutil.Eventually(t, 20*time.Second, "the recording file listed", func() bool {
		if fs := c.ts.recordedFiles(rec); len(fs) == 1 {
			started = time.Now()
			return true
		}
		return false
	})
	time.Sleep(8*time.Second - time.Since(started))
	c.kill()
	pub.Stop()

	c = startChild(t, addr, data)
	fs := c.ts.recordedFiles(rec)
	if len(fs) != 1 || fs[0].State != "repaired" || fs[0].Ended == nil {
		t.Fatalf("after the crash: files %+v, want one repaired", fs)
	}
	path := filepath.Join(data, "recordings", filepath.FromSlash(fs[0].Path))
	d, codecs := probeSeconds(t, path)
	t.Logf("repaired file: ffprobe %.2f s, entry %.2f s, %d bytes, %v", d, fs[0].Duration, fs[0].Size, codecs)
	if d < 6.5 {
		t.Errorf("repaired file holds %.2f s of the 8 s recorded, want at least 6.5 s", d)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != fs[0].Size {
		t.Errorf("entry size %d, disk %v %v", fs[0].Size, fi.Size(), err)
	}
	if out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("decoding the repaired file: %v: %s", err, out)
	}

	// The task is active again and records the next session to a new file.
	var r struct {
		Active bool   `json:"active"`
		State  string `json:"state"`
	}
	c.ts.call("/api/recording/getById", map[string]any{"id": rec}, http.StatusOK, &r)
	if !r.Active {
		t.Errorf("recording not active after the restart: %+v", r)
	}
	waitState(t, c.ts, "/api/recording/getById", rec, "waiting")
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam"))...)
	testutil.Eventually(t, 20*time.Second, "a new file after the restart", func() bool {
		fs := c.ts.recordedFiles(rec)
		return len(fs) == 2 && fs[1].State == "recording" && fs[1].Duration >= 2
	})
	// A clean stop completes the open file.
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("server did not stop on SIGTERM")
	}
	c = startChild(t, addr, data)
	if fs := c.ts.recordedFiles(rec); len(fs) != 2 || fs[1].State != "complete" || fs[1].Duration < 1 {
		t.Errorf("after a clean stop: files %+v, want the second complete", fs)
	}
}
