//go:build linux

package link

import "syscall"

// childAttr puts a test's child process (srt-live-transmit, the relay) in its own process
// group and has the kernel kill it if the test binary dies first (a crash, a timeout), so no
// child outlives the test. The tests start children from unlocked goroutines, whose threads
// the runtime does not end.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
