package tooling

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Proc is a child process in its own process group, with its output (stdout and stderr) kept.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
	err  error
}

// Start starts bin with args and env (added to this process's environment), in its own process
// group, keeping its output; name is what errors call it.
func Start(name, bin string, env []string, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cmd.Environ(), env...)
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &Proc{Name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool { return Closed(p.done) }

// Closed reports, without waiting, whether ch is closed: whether the process whose wait closes
// it has ended.
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Output is what the process printed so far.
func (p *Proc) Output() string { return p.out.String() }

// Stop sends sig (SIGINT lets ffmpeg finish its file, SIGTERM stops sluice gracefully) and
// kills the process group after grace.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	if p.Exited() {
		return
	}
	StopGroup(p.Pid(), p.done, sig, grace)
}

// StopGroup sends sig to the process group that pid leads, and SIGKILL to the group when done
// is not closed within grace; it returns once done is closed (done is closed when the process
// has been waited for).
func StopGroup(pid int, done <-chan struct{}, sig syscall.Signal, grace time.Duration) {
	_ = syscall.Kill(-pid, sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}
