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
// The child runs nice levels below the server: right after the start, the child's process
// group is lowered (Linux keeps nice values per thread, and setpriority on a process group
// lowers every thread of every process in it; the threads and processes ffmpeg starts later
// inherit the value). ffmpeg runs at the server's priority only for the moment between its exec
// and that call, before it has started threads of its own. The forking thread itself is never
// lowered: Go code it ran at a low priority would hold one of the runtime's processors while the
// kernel, busy with the children, left it waiting (issue 13: an earlier version did, and the
// API stalled behind it). niceErr says why the priority could not be lowered (the child then
// runs at the server's).
func startChild(cmd *exec.Cmd, nice int) (release func(), niceErr, err error) {
	type result struct{ niceErr, err error }
	started := make(chan result, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // its priority is the server's: the runtime may reuse it
		var r result
		r.err = cmd.Start()
		if r.err == nil && nice > 0 {
			target, err := threadNice()
			if err == nil {
				err = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, min(target+nice, maxNice))
			}
			r.niceErr = err
		}
		started <- r
		<-stop
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
