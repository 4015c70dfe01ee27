//go:build linux

package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in its own process group and has the kernel SIGKILL it when
// the thread that started it exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startChild starts cmd, in its own process group, from the forker's thread (see forker),
// which lives at least until release is called (once the child is reaped): Pdeathsig fires
// when the thread that forked the child exits, not the process, so holding the thread keeps
// the child alive exactly that long.
//
// The child runs nice levels below the server: right after the start, the child's process
// group is lowered (Linux keeps nice values per thread, and setpriority on a process group
// lowers every thread of every process in it; the threads and processes ffmpeg starts later
// inherit the value). ffmpeg runs at the server's priority only for the moment between its exec
// and that call, before it has started threads of its own. The forking thread itself is never
// lowered: Go code it ran at a low priority would hold one of the runtime's processors while the
// kernel, busy with the children, left it waiting (issue 13: an earlier version did, and the
// API stalled behind it). niceErr says why the priority could not be lowered (the child then
// runs at the server's). At the lowest priority (nice 19) the child's main thread is also put
// in the SCHED_IDLE policy (schedIdle), which the threads it starts later inherit.
func startChild(cmd *exec.Cmd, nice int) (release func(), niceErr, err error) {
	release, err = forks.start(cmd)
	if err != nil || nice <= 0 {
		return release, nil, err
	}
	target, niceErr := threadNice()
	if niceErr == nil {
		niceErr = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, min(target+nice, maxNice))
	}
	if niceErr == nil && nice >= maxNice {
		niceErr = schedIdleProcess(cmd.Process.Pid)
	}
	return release, niceErr, nil
}

// forks is the server's one forker.
var forks forker

// forker starts every child from one goroutine locked to its OS thread, which lives as long as
// a child it started is not released, and then ends (taking its thread with it). Before, each
// child had a locked thread of its own for its whole life, and did its start (fork, exec,
// setpriority, a system call per ffmpeg thread) on it: every step that blocked handed the
// runtime's processor to that thread and back. A Go execution trace of issue 13's start/remove
// race (40 children started at once on 2 cores) showed the API's accept loop runnable for
// 313 ms behind those hand-offs. Forks were already one at a time (Go's syscall.ForkLock), so
// one forking thread costs no start-up time; the priority calls now run on any thread.
type forker struct {
	mu   sync.Mutex
	live int          // children started and not yet released (or starting)
	reqs chan forkReq // to the forker goroutine; nil while none runs
}

// forkReq is one child to start, and where the result goes.
type forkReq struct {
	cmd  *exec.Cmd
	done chan error
}

// start starts cmd from the forker's thread (starting the forker if none runs) and returns the
// release to call once the child is reaped.
func (f *forker) start(cmd *exec.Cmd) (release func(), err error) {
	f.mu.Lock()
	if f.reqs == nil {
		f.reqs = make(chan forkReq)
		go forkLoop(f.reqs)
	}
	f.live++
	reqs := f.reqs
	f.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(f.release) }
	req := forkReq{cmd: cmd, done: make(chan error, 1)}
	reqs <- req
	if err := <-req.done; err != nil {
		release()
		return func() {}, err
	}
	return release, nil
}

// release counts one child gone; the last one ends the forker.
func (f *forker) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live--; f.live == 0 {
		close(f.reqs)
		f.reqs = nil
	}
}

// forkLoop is the forker goroutine: locked to its thread, never unlocked, so that the thread
// ends with it (when reqs is closed) rather than being reused by the runtime.
func forkLoop(reqs <-chan forkReq) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// threadNice returns the calling thread's nice value; Linux's raw getpriority system call
// answers 20 - nice.
func threadNice() (int, error) {
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	return 20 - raw, err
}

// schedIdleProcess puts a child in the SCHED_IDLE policy. Nice values weigh threads against
// each other, and weights add up: 40 starting ffmpeg children of 15 threads each at nice 19
// (weight 15 a thread) still outweighed the server's few threads, and the API answered in up
// to 250 ms while they started (issue 13's start/remove race, on a 2-core machine). A
// SCHED_IDLE thread weighs 3, any waking normal thread preempts it at once, and the kernel
// places a waking thread on a CPU that runs only SCHED_IDLE work as on an idle one: the
// children get the cycles the server leaves, and the server's threads no longer queue behind
// them. Any process may move its own children there without privileges.
//
// schedIdleProcess moves the process pid: its main thread first (threads it starts from then
// on inherit the policy), then every thread it already has. A process it forked before the
// call keeps the normal policy (at nice 19); ffmpeg forks none, and starts its threads after
// about 100 ms of start-up, long after this call.
func schedIdleProcess(pid int) error {
	if err := schedIdle(pid); err != nil {
		return err
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil // the child ended meanwhile
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil && tid != pid {
			_ = schedIdle(tid) // a thread that ended meanwhile
		}
	}
	return nil
}

// Scheduling policies, linux/sched.h.
const (
	policyOther = 0 // SCHED_OTHER
	policyIdle  = 5 // SCHED_IDLE
)

// schedIdle puts the thread tid in the SCHED_IDLE policy.
func schedIdle(tid int) error { return setPolicy(tid, policyIdle) }

// setPolicy sets the scheduling policy of the thread tid (with priority 0, the only one the
// two policies used here have).
func setPolicy(tid, policy int) error {
	var param struct{ priority int32 }
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		return fmt.Errorf("sched_setscheduler %d: %w", policy, errno)
	}
	return nil
}

// hurry gives a child that is being stopped the server's priority back: every thread of
// process pid goes to the SCHED_OTHER policy at the calling thread's nice value. A process
// needs CPU time to exit, even on SIGKILL (the kernel tears each thread down in that thread's
// own context), and to close its outputs on SIGINT. At SCHED_IDLE and nice 19 it gets next to
// none while the machine is busy: measured on 2 cores with eight busy loops at nice 0, an
// ffmpeg in SCHED_IDLE took 4.5 s to die after SIGKILL, against 0.24 s at the normal policy;
// meanwhile it holds its memory and ports (a restarted listener input may not bind them), and a
// graceful stop could run past its grace. Leaving SCHED_IDLE and lowering a nice value need
// CAP_SYS_NICE (or an RLIMIT_NICE that allows nice 0): without it the child stays where it
// was and hurry returns the error; the stop goes on regardless.
func hurry(pid int) error {
	target, err := threadNice()
	if err != nil {
		return err
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil // the child ended meanwhile
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := setPolicy(tid, policyOther); err != nil && first == nil && tid == pid {
			first = err
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, target); err != nil && first == nil && tid == pid {
			first = fmt.Errorf("setpriority: %w", err)
		}
	}
	return first
}
