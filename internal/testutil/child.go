package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Child is a program a test runs as a peer (ffmpeg publishing or receiving, most often),
// killed when the test ends, with its standard error kept for failure messages.
type Child struct {
	cmd    *exec.Cmd
	name   string
	stderr SyncBuffer
	done   chan error // holds the exit error once the program has ended
}

// StartChild starts the program at path with args, its standard input empty.
func StartChild(t testing.TB, path string, args ...string) *Child {
	t.Helper()
	c := &Child{cmd: exec.Command(path, args...), name: filepath.Base(path), done: make(chan error, 1)}
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", c.name, err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(c.Kill)
	return c
}

// Wait waits at most timeout for the program to exit by itself. An exit with an error, or
// none in time, is returned with what the program wrote to its standard error.
func (c *Child) Wait(timeout time.Duration) error {
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			return fmt.Errorf("%w: %s", err, c.stderr.String())
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s still running after %s: %s", c.name, timeout, c.stderr.String())
	}
}

// Stderr returns what the program wrote to its standard error so far.
func (c *Child) Stderr() string { return c.stderr.String() }

// Interrupt ends the program as a person would (q on a terminal; SIGINT here: ffmpeg then
// finishes its output), waiting at most d before it kills it.
func (c *Child) Interrupt(d time.Duration) {
	_ = c.cmd.Process.Signal(os.Interrupt)
	if c.Wait(d) != nil {
		c.Kill()
	}
}

// Kill kills the program, if it still runs, and waits for it to end.
func (c *Child) Kill() {
	_ = c.cmd.Process.Kill()
	err := <-c.done
	c.done <- err
}
