//go:build unix

package supervisor

import (
	"os"
	"syscall"
)

// interruptGroup sends SIGINT to the process group led by p.
func interruptGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGINT) }

// killGroup sends SIGKILL to the process group led by p.
func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
