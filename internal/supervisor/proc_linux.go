//go:build linux

package supervisor

import (
	"runtime"
	"syscall"
)

// sysProcAttr puts the child in its own process group and has the kernel SIGKILL it when
// the thread that started it exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pinThread locks the calling goroutine to its thread and returns the unlock. Pdeathsig
// fires when the forking thread exits, not the process, and the Go runtime ends a thread
// whose locked goroutine exits; holding the thread for the child's life keeps it alive.
func pinThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
