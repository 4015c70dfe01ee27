package soak

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/tooling"
)

// Server is a bin/sluice the soak started.
type Server struct {
	// API and Debug are the base URLs of the API and of the pprof listener.
	API, Debug string
	// Data is the data folder; LogPath the file its output goes to.
	Data, LogPath string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// StartServer starts bin with its data in data, the API and pprof on loopback ports from
// ports, and the admin password, and waits until it answers /healthz.
func StartServer(ctx context.Context, bin, data, password string, ports *Ports) (*Server, error) {
	apiPort, err := ports.Take()
	if err != nil {
		return nil, err
	}
	debugPort, err := ports.Take()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(data, "sluice.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("SLUICE_ADDR=127.0.0.1:%d", apiPort),
		"SLUICE_DATA="+data,
		"SLUICE_ADMIN_PASSWORD="+password,
		fmt.Sprintf("SLUICE_DEBUG_ADDR=127.0.0.1:%d", debugPort),
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a kill at the end reaches any ffmpeg it left behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &Server{
		API: fmt.Sprintf("http://127.0.0.1:%d", apiPort), Debug: fmt.Sprintf("http://127.0.0.1:%d", debugPort),
		Data: data, LogPath: logPath, cmd: cmd, done: make(chan struct{}),
	}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	if err := s.waitHealthy(ctx, 30*time.Second); err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

// waitHealthy polls /healthz until it answers 200.
func (s *Server) waitHealthy(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("sluice exited at start (%w); its log: %s", s.err, s.LogPath)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.API+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sluice not healthy at %s/healthz within %v; its log: %s", s.API, d, s.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Alive tells whether the server is still running.
func (s *Server) Alive() bool { return !tooling.Closed(s.done) }

// Stop sends SIGTERM and waits up to grace for the server to exit; after that it kills the
// process group. It returns the exit error, or an error when the kill was needed.
func (s *Server) Stop(grace time.Duration) error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		var ee *exec.ExitError
		if errors.As(s.err, &ee) {
			return fmt.Errorf("sluice exited with %w after SIGTERM", ee)
		}
		return s.err
	case <-time.After(grace):
		s.Kill()
		return fmt.Errorf("sluice still running %v after SIGTERM: killed", grace)
	}
}

// Kill kills the server's process group and waits for the server.
func (s *Server) Kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}
