//go:build unix && !linux

package supervisor

import "syscall"

// sysProcAttr puts the child in its own process group. Without Pdeathsig, the child
// outlives a server that is killed; a graceful exit still stops it.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// pinThread is not needed without Pdeathsig.
func pinThread() func() { return func() {} }
