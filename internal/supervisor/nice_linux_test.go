//go:build linux

package supervisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// niceOf reads the nice value of a task (a process, or a thread under /proc/<pid>/task) from
// its stat file: the 19th field, the 17th after the parenthesised command name.
func niceOf(t *testing.T, statPath string) (int, bool) {
	t.Helper()
	return statField(t, statPath, 19)
}

// policyOf reads the scheduling policy of a task from its stat file: the 41st field (0
// SCHED_OTHER, 5 SCHED_IDLE).
func policyOf(t *testing.T, statPath string) (int, bool) {
	t.Helper()
	return statField(t, statPath, 41)
}

// statField reads the numeric field n (counted from 1, as in proc(5)) of a stat file.
func statField(t *testing.T, statPath string, n int) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(statPath)
	if err != nil {
		return 0, false // the task ended meanwhile
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:])) // from field 3 on
	if len(f) < n-2 {
		t.Fatalf("%s: %d fields after the command name, want field %d", statPath, len(f), n)
	}
	v, err := strconv.Atoi(f[n-3])
	if err != nil {
		t.Fatalf("%s: field %d %q: %v", statPath, n, f[n-3], err)
	}
	return v, true
}

// threadNices returns the nice value of each thread of this process.
func threadNices(t *testing.T) map[string]int {
	t.Helper()
	paths, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range paths {
		if n, ok := niceOf(t, p); ok {
			out[p] = n
		}
	}
	return out
}

// TestChildNice: a child, and the processes it starts, run DefaultNice levels below the
// server (clamped to 19), or at the server's level after SetNice(0); at 19 they are also in
// the SCHED_IDLE policy; no thread of the server
// has a lowered priority at any time (the process group of the child is lowered, not the
// forking thread).
func TestChildNice(t *testing.T) {
	self, ok := niceOf(t, "/proc/self/stat")
	if !ok {
		t.Fatal("no /proc/self/stat")
	}
	defer SetNice(Nice())
	for _, c := range []struct {
		set, want int
	}{{DefaultNice, min(self+DefaultNice, maxNice)}, {0, self}, {5, min(self+5, maxNice)}, {25, maxNice}} {
		SetNice(c.set)
		var out testutil.SyncBuffer
		pids := make(chan int, 1)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := Command{
			Path: "/bin/sh",
			// The grandchild stands for the threads and processes ffmpeg starts, after its
			// start-up (about 100 ms of dynamic linking and set-up).
			Args:    []string{"-c", "sleep 0.2; sleep 30 & echo $!; wait"},
			Stdout:  &out,
			Grace:   time.Second,
			Logger:  quietLogger(),
			OnStart: func(pid int) { pids <- pid },
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Run(ctx) }()
		child := <-pids
		grandchild := grandchildPID(t, &out)
		for p, n := range threadNices(t) {
			if n != self {
				t.Errorf("SetNice(%d): server thread %s runs at nice %d while a child runs, want %d", c.set, p, n, self)
			}
			if pol, ok := policyOf(t, p); ok && pol != 0 {
				t.Errorf("SetNice(%d): server thread %s has scheduling policy %d while a child runs, want 0 (SCHED_OTHER)", c.set, p, pol)
			}
		}
		// At the lowest priority the children are also SCHED_IDLE (5), inherited by what they start.
		wantPolicy := 0
		if c.want == maxNice && c.set >= maxNice {
			wantPolicy = 5
		}
		for what, stat := range map[string]string{
			"child":      "/proc/" + strconv.Itoa(child) + "/stat",
			"grandchild": "/proc/" + grandchild + "/stat",
		} {
			if n, ok := niceOf(t, stat); !ok || n != c.want {
				t.Errorf("SetNice(%d): the %s runs at nice %d (read %v), want %d (the server runs at %d)", c.set, what, n, ok, c.want, self)
			}
			if pol, ok := policyOf(t, stat); !ok || pol != wantPolicy {
				t.Errorf("SetNice(%d): the %s has scheduling policy %d (read %v), want %d", c.set, what, pol, ok, wantPolicy)
			}
		}
		cancel()
		<-done
	}
}

// TestHurry: a child being stopped gets the server's priority back, so that it can exit on a
// busy machine (a SCHED_IDLE process took seconds to die after SIGKILL). With the privilege
// to raise a priority (root, as in CI) its thread leaves SCHED_IDLE for SCHED_OTHER at the
// server's nice value; without it hurry reports EPERM and the child stays as it was.
func TestHurry(t *testing.T) {
	self, ok := niceOf(t, "/proc/self/stat")
	if !ok {
		t.Fatal("no /proc/self/stat")
	}
	defer SetNice(Nice())
	SetNice(DefaultNice)
	pids := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command{Path: "sleep", Args: []string{"30"}, Logger: quietLogger(), OnStart: func(pid int) { pids <- pid }}
	done := make(chan error, 1)
	go func() { done <- cmd.Run(ctx) }()
	defer func() { cancel(); <-done }()
	child := <-pids
	stat := "/proc/" + strconv.Itoa(child) + "/stat"
	if pol, ok := policyOf(t, stat); !ok || pol != policyIdle {
		t.Fatalf("the child has policy %d (read %v) before hurry, want %d (SCHED_IDLE)", pol, ok, policyIdle)
	}
	err := hurry(child)
	wantNice, wantPolicy := self, policyOther
	if os.Geteuid() != 0 {
		if !errors.Is(err, syscall.EPERM) {
			t.Errorf("hurry without privileges = %v, want EPERM", err)
		}
		wantNice, wantPolicy = maxNice, policyIdle
	} else if err != nil {
		t.Errorf("hurry as root: %v", err)
	}
	if pol, ok := policyOf(t, stat); !ok || pol != wantPolicy {
		t.Errorf("after hurry the child has policy %d (read %v), want %d", pol, ok, wantPolicy)
	}
	if n, ok := niceOf(t, stat); !ok || n != wantNice {
		t.Errorf("after hurry the child runs at nice %d (read %v), want %d", n, ok, wantNice)
	}
}
