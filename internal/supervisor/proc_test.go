//go:build unix

package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// helperEnv makes the test binary act as a server that starts a child (see TestMain).
const helperEnv = "SLUICE_SUPERVISOR_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "pdeathsig" {
		pdeathsigHelper()
		return
	}
	os.Exit(m.Run())
}

// pdeathsigHelper starts a long child, prints its pid and waits to be killed.
func pdeathsigHelper() {
	cmd := Command{
		Path:    "sleep",
		Args:    []string{"30"},
		Logger:  quietLogger(),
		OnStart: func(pid int) { fmt.Println(pid) },
	}
	_ = cmd.Run(context.Background())
	os.Exit(1)
}

// processGone tells whether pid no longer runs: it does not exist, or it is a zombie waiting
// for a reaper we do not control.
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if rerr != nil {
		return errors.Is(rerr, os.ErrNotExist)
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// groupGone tells whether no process of group pgid runs any more.
func groupGone(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return true
	}
	// Zombies keep the group alive for kill(2); look for live members.
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && !processGone(pid) {
			return false
		}
	}
	return true
}

func TestCommandExitError(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := Command{Path: "/bin/sh", Args: []string{"-c", "echo boom >&2; exit 3"}, Logger: quietLogger()}
	err := cmd.Run(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want an *ExitError", err)
	}
	if msg := err.Error(); msg != "sh: exit status 3: boom" {
		t.Fatalf("message %q", msg)
	}
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 3 {
		t.Fatalf("exit code not kept: %v", err)
	}
}

// TestCommandRedact: with Redact, neither the logged arguments, the logged stderr lines nor
// the ExitError show what it hides.
func TestCommandRedact(t *testing.T) {
	defer goleak.VerifyNone(t)
	log, logs := testutil.LogBuffer()
	cmd := Command{Path: "/bin/sh", Args: []string{"-c", "echo open tok3nS3cret failed >&2; exit 3", "tok3nS3cret"},
		Logger: log, Redact: func(s string) string { return strings.ReplaceAll(s, "tok3nS3cret", "REDACTED") }}
	err := cmd.Run(context.Background())
	if err == nil || err.Error() != "sh: exit status 3: open REDACTED failed" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(logs.String(), "REDACTED") {
		t.Fatalf("no argument or stderr line logged at debug level:\n%s", logs)
	}
	testutil.NoSecret(t, "tok3nS3cret", logs, err)
}

func TestCommandExitZero(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out testutil.SyncBuffer
	cmd := Command{Path: "/bin/sh", Args: []string{"-c", "echo hello"}, Stdout: &out, Logger: quietLogger()}
	if err := cmd.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestCommandNotFound(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := Command{Path: "/nonexistent/ffmpeg", Logger: quietLogger()}
	err := cmd.Run(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "ffmpeg: ") {
		t.Fatalf("got %v", err)
	}
}

func TestCommandStderrTail(t *testing.T) {
	defer goleak.VerifyNone(t)
	script := `i=1; while [ $i -le 100 ]; do echo "line $i" >&2; i=$((i+1)); done; exit 1`
	err := Command{Path: "/bin/sh", Args: []string{"-c", script}, Logger: quietLogger()}.Run(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v", err)
	}
	if len(ee.Stderr) != tailLines || ee.Stderr[0] != "line 81" || ee.Stderr[tailLines-1] != "line 100" {
		t.Fatalf("stderr tail %q", ee.Stderr)
	}
	if want := "sh: exit status 1: line 96 | line 97 | line 98 | line 99 | line 100"; err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
}

// runAndStop runs cmd, stops it once it started and ready (nil: at once) tells it is set up,
// and returns its pid and how long the stop took; Run must return context.Canceled.
func runAndStop(t *testing.T, cmd Command, ready func() bool) (int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan int, 1)
	cmd.OnStart = func(pid int) { started <- pid }
	errc := make(chan error, 1)
	go func() { errc <- cmd.Run(ctx) }()
	pid := <-started
	if ready != nil {
		eventually(t, 5*time.Second, "program ready", ready)
	}
	begin := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	return pid, time.Since(begin)
}

func TestCommandInterrupts(t *testing.T) {
	defer goleak.VerifyNone(t)
	pid, d := runAndStop(t, Command{Path: "sleep", Args: []string{"30"}, Grace: 10 * time.Second, Logger: quietLogger()}, nil)
	if d > 5*time.Second {
		t.Fatalf("SIGINT stop took %v; the grace is 10 s", d)
	}
	if !processGone(pid) {
		t.Fatalf("pid %d still runs", pid)
	}
}

// TestCommandKillOnStop: with KillOnStop a stop kills the group at once: a program that
// ignores SIGINT is gone well before its grace would have passed.
func TestCommandKillOnStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	const grace = 10 * time.Second
	// The shell says when it ignores SIGINT: a stop before that would end it by SIGINT alone.
	var out testutil.SyncBuffer
	pid, d := runAndStop(t, Command{Path: "/bin/sh", Args: []string{"-c", `trap "" INT; echo ready; sleep 30 & wait`}, Grace: grace,
		Stdout: &out, KillOnStop: true, Logger: quietLogger()}, func() bool { return strings.Contains(out.String(), "ready") })
	if d > grace/2 {
		t.Fatalf("stop took %v: the program that ignores SIGINT was not killed at once", d)
	}
	eventually(t, 5*time.Second, "group gone", func() bool { return groupGone(pid) })
}

func TestCommandKillsGroupAfterGrace(t *testing.T) {
	defer goleak.VerifyNone(t)
	const grace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan int, 1)
	var out testutil.SyncBuffer
	cmd := Command{
		Path:    "/bin/sh",
		Args:    []string{"-c", `trap "" INT; sleep 30 & echo $!; wait`},
		Stdout:  &out,
		Grace:   grace,
		Logger:  quietLogger(),
		OnStart: func(pid int) { started <- pid },
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Run(ctx) }()
	pid := <-started
	grandchild, err := strconv.Atoi(grandchildPID(t, &out))
	if err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(begin); d < grace || d > 10*time.Second {
		t.Fatalf("stop took %v with a grace of %v", d, grace)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("shell %d: kill 0 gave %v, want ESRCH", pid, err)
	}
	eventually(t, 5*time.Second, "grandchild gone", func() bool { return processGone(grandchild) })
	eventually(t, 5*time.Second, "group gone", func() bool { return groupGone(pid) })
}

func TestSupervisedChildFailureBackoff(t *testing.T) {
	defer goleak.VerifyNone(t)
	const (
		initial  = 40 * time.Millisecond
		maxDelay = 160 * time.Millisecond
	)
	var (
		mu     sync.Mutex
		starts []time.Time
		rec    recorder
		logs   backoffLog
	)
	cmd := Command{
		Path:   "/bin/sh",
		Args:   []string{"-c", "echo boom >&2; exit 3"},
		Logger: quietLogger(),
		OnStart: func(int) {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
		},
	}
	s := New("ffmpeg", cmd.RunFunc(), Options{Logger: logs.logger(), OnChange: rec.add, Initial: initial, Max: maxDelay})
	s.Start()
	defer s.Stop()
	eventually(t, 10*time.Second, "six starts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) >= 6
	})
	s.Stop()

	st := s.Status()
	if !strings.Contains(st.LastError, "exit status 3") || !strings.Contains(st.LastError, "boom") {
		t.Fatalf("last error %q", st.LastError)
	}
	restarts := 0
	for _, c := range rec.all() {
		if c.State == Reconnecting {
			if c.Restarts != restarts+1 {
				t.Fatalf("restarts went from %d to %d", restarts, c.Restarts)
			}
			restarts = c.Restarts
		}
	}
	if restarts < 5 || st.Restarts != restarts {
		t.Fatalf("restarts %d (status %d), want at least 5", restarts, st.Restarts)
	}

	want := []time.Duration{initial, 2 * initial, maxDelay, maxDelay, maxDelay}
	if got := logs.all()[:len(want)]; !slices.Equal(got, want) {
		t.Fatalf("backoffs %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, w := range want {
		// A gap is the backoff plus one run of sh, which a loaded machine can stretch by
		// seconds: only the lower bound is firm.
		if gap := starts[i+1].Sub(starts[i]); gap < w {
			t.Errorf("gap %d: %v, shorter than the backoff %v", i, gap, w)
		}
	}
}

func TestSupervisorStopKillsStubbornChild(t *testing.T) {
	defer goleak.VerifyNone(t)
	const grace = 200 * time.Millisecond
	pids := make(chan int, 1)
	var out testutil.SyncBuffer
	cmd := Command{
		Path:    "/bin/sh",
		Args:    []string{"-c", `trap "" INT; echo ready; sleep 30`},
		Stdout:  &out,
		Grace:   grace,
		Logger:  quietLogger(),
		OnStart: func(pid int) { pids <- pid },
	}
	s := New("stubborn", cmd.RunFunc(), Options{Logger: quietLogger()})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "running", stateIs(s, Running))
	eventually(t, 5*time.Second, "trap set", func() bool { return out.String() == "ready\n" })
	pid := <-pids
	begin := time.Now()
	s.Stop()
	if d := time.Since(begin); d < grace || d > 10*time.Second {
		t.Fatalf("Stop took %v with a grace of %v", d, grace)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d: kill 0 gave %v, want ESRCH", pid, err)
	}
	eventually(t, 5*time.Second, "group gone", func() bool { return groupGone(pid) })
	if st := s.Status(); st.State != Stopped || st.Restarts != 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestChildDiesWithServer(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("Pdeathsig is Linux only")
	}
	defer goleak.VerifyNone(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command(self)
	server.Env = append(os.Environ(), helperEnv+"=pdeathsig")
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = server.Process.Kill()
		_ = server.Wait()
		t.Fatalf("reading the child pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	_ = server.Process.Kill()
	_ = server.Wait()
	eventually(t, 5*time.Second, "child of the killed server gone", func() bool { return processGone(child) })
}
