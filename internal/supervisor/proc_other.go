//go:build !unix

package supervisor

import (
	"os"
	"syscall"
)

// sysProcAttr has no process groups to ask for here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// pinThread is not needed without Pdeathsig.
func pinThread() func() { return func() {} }

// interruptGroup asks the process alone to stop; where that is unsupported, Grace passes and
// killGroup follows.
func interruptGroup(p *os.Process) error { return p.Signal(os.Interrupt) }

// killGroup kills the process alone.
func killGroup(p *os.Process) error { return p.Kill() }
