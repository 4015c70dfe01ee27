// Package writefault makes a test process's file writes fail with a chosen errno, the way a full
// disk (ENOSPC), a used-up quota (EDQUOT) or a failing device (EIO) makes them fail, without
// privileges: a seccomp filter answers pwrite(2), the call SQLite writes with, with the errno.
// The filter cannot be removed: use it in a child process that runs one test.
package writefault

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FailPwrite makes every later pwrite(2) of every thread of this process fail with errno.
// Plain write(2) still works, so the test can report its result.
func FailPwrite(errno syscall.Errno) error {
	prog := []unix.SockFilter{
		// A seccomp filter sees struct seccomp_data: the syscall number is its first word.
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_PWRITE64},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(errno)&unix.SECCOMP_RET_DATA},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// An unprivileged process may install a filter once it gives up gaining privileges.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("writefault: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// TSYNC applies the filter to every thread of the process, not only this one.
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("writefault: seccomp(SET_MODE_FILTER): %w", e)
	}
	runtime.KeepAlive(prog)
	return nil
}

// childEnv names the test a child process runs as the faulty child.
const childEnv = "SLUICE_WRITEFAULT_CHILD"

// InChild tells whether this process is the child RunChild started for test name.
func InChild(name string) bool { return os.Getenv(childEnv) == name }

// RunChild runs the current test binary again with only test name selected and InChild(name)
// true, with extra environment variables, and fails t with the child's output unless the child
// ran that test and passed.
func RunChild(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"="+name), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name+" ") {
		t.Fatalf("child %s did not run the test:\n%s", name, out)
	}
	t.Logf("child %s:\n%s", name, out)
}

// AnyChild tells whether this process is a faulty child of any test (RunChild).
func AnyChild() bool { return os.Getenv(childEnv) != "" }
