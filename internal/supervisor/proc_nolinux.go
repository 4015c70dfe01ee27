//go:build unix && !linux

package supervisor

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in its own process group. Without Pdeathsig, the child
// outlives a server that is killed; a graceful exit still stops it.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// startChild starts cmd and then sets the child's nice value to nice (these systems keep nice
// values per process, so the server cannot lower a thread of its own for the child to inherit;
// the child runs at the server's priority for the moment between its start and the call, and a
// server that itself runs below nice 0 is not taken into account). release has nothing to do.
func startChild(cmd *exec.Cmd, nice int) (release func(), niceErr, err error) {
	if err := cmd.Start(); err != nil {
		return func() {}, nil, err
	}
	if nice > 0 {
		niceErr = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, nice)
	}
	return func() {}, niceErr, nil
}

// hurry gives a child that is being stopped the server's nice value back, so that it exits or
// closes its outputs at once on a busy machine; lowering a nice value needs privileges, and
// without them the child keeps its priority.
func hurry(pid int) error {
	self, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return err
	}
	return syscall.Setpriority(syscall.PRIO_PROCESS, pid, self)
}
