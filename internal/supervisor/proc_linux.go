//go:build linux

package supervisor

import (
	"os/exec"
	"runtime"
	"syscall"
)

// sysProcAttr puts the child in its own process group and has the kernel SIGKILL it when
// the thread that started it exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startChild starts cmd, in its own process group, from a thread of its own that lives until
// release is called (once the child is reaped): Pdeathsig fires when the thread that forked
// the child exits, not the process, so holding the thread keeps the child alive exactly that
// long.
//
// The child runs nice levels below the server. Linux keeps nice values per thread, and a new
// process or thread starts with the value of the thread that created it: the forking thread
// lowers its own priority first, so the child and every thread it starts run at the lower
// priority from their first instruction. That thread is never unlocked from its goroutine, so
// the Go runtime ends it with the goroutine instead of running other code on it at the lowered
// priority. The process's main thread (which the runtime never ends, and whose nice value ps
// and top show as the server's) keeps its priority: a fork from it sets the child's process
// group's priority right after the start instead, before ffmpeg has started threads of its
// own. niceErr says why the priority could not be lowered (the child then runs at the
// server's).
func startChild(cmd *exec.Cmd, nice int) (release func(), niceErr, err error) {
	return startFrom(cmd, nice, func() bool { return syscall.Gettid() != syscall.Getpid() })
}

// startFrom is startChild; mayLower tells, on the locked thread, whether that thread may be
// lowered (tests pass false to take the process group's path anywhere).
func startFrom(cmd *exec.Cmd, nice int, mayLower func() bool) (release func(), niceErr, err error) {
	type result struct{ niceErr, err error }
	started := make(chan result, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		var r result
		target, err := threadNice()
		target = min(target+nice, maxNice)
		lower := nice > 0 && mayLower()
		switch {
		case err != nil:
			r.niceErr = err
		case lower:
			// For PRIO_PROCESS with who 0, Linux's setpriority acts on the calling thread.
			r.niceErr = syscall.Setpriority(syscall.PRIO_PROCESS, 0, target)
		}
		r.err = cmd.Start()
		if r.err == nil && r.niceErr == nil && nice > 0 && !lower {
			r.niceErr = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, target)
		}
		started <- r
		<-stop
		if !lower {
			runtime.UnlockOSThread() // its priority is the server's: the runtime may reuse it
		}
		// Otherwise the goroutine ends locked, and the runtime ends its thread.
	}()
	r := <-started
	return func() { close(stop); <-done }, r.niceErr, r.err
}

// threadNice returns the calling thread's nice value; Linux's raw getpriority system call
// answers 20 - nice.
func threadNice() (int, error) {
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	return 20 - raw, err
}
