//go:build !unix

package supervisor

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr has no process groups to ask for here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// startChild starts cmd; there is no nice value to set here, and no thread to hold.
func startChild(cmd *exec.Cmd, _ int) (release func(), niceErr, err error) {
	return func() {}, nil, cmd.Start()
}

// interruptGroup asks the process alone to stop; where that is unsupported, Grace passes and
// killGroup follows.
func interruptGroup(p *os.Process) error { return p.Signal(os.Interrupt) }

// killGroup kills the process alone.
func killGroup(p *os.Process) error { return p.Kill() }

// hurry has no priority to restore here.
func hurry(int) error { return nil }
