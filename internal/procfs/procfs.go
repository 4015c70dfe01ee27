// Package procfs reads Linux's /proc for the server (its own sockets, its children's CPU) and
// for the tests, the benchmark and the soak (CPU time, memory, open files, children, sockets).
// It imports only the standard library.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// Stat is what is read from /proc/<pid>/stat.
type Stat struct {
	PID   int
	State byte // R, S, D, Z, ...
	PPID  int
	CPU   time.Duration // user + system time since the process started
}

// Zombie tells whether the process ended and its parent has not waited for it.
func (s Stat) Zombie() bool { return s.State == 'Z' }

// ParseStat reads a /proc/<pid>/stat line. The command name sits in parentheses and may hold
// spaces and parentheses, so the fields are read after the last ')'.
func ParseStat(raw []byte) (Stat, error) {
	open := bytes.IndexByte(raw, '(')
	end := bytes.LastIndexByte(raw, ')')
	if open < 1 || end < open {
		return Stat{}, fmt.Errorf("proc stat %.60q: no (command)", raw)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(raw[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat %.60q: pid: %w", raw, err)
	}
	f := bytes.Fields(raw[end+1:])
	if len(f) < 13 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("proc stat %.60q: %d fields after the command, want at least 13", raw, len(f))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat %.60q: ppid: %w", raw, err)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return Stat{}, fmt.Errorf("proc stat %.60q: cpu ticks %q: not a count", raw, s)
		}
		ticks += n
	}
	return Stat{PID: pid, State: f[0][0], PPID: ppid, CPU: time.Duration(ticks) * clockTick}, nil
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return ParseStat(raw)
}

// Status is the memory read from /proc/<pid>/status, in bytes.
type Status struct {
	RSS int64 // VmRSS: resident now
	HWM int64 // VmHWM: the peak resident size
}

// ParseStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
func ParseStatus(b []byte) (Status, error) {
	var st Status
	seen := 0
	for line := range bytes.Lines(b) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &st.RSS
		case "VmHWM":
			dst = &st.HWM
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return Status{}, fmt.Errorf("proc status: %s %q: want \"<n> kB\"", name, bytes.TrimSpace(rest))
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || n < 0 {
			return Status{}, fmt.Errorf("proc status: %s %q: not a size", name, f[0])
		}
		*dst = n * 1024
		seen++
	}
	if seen < 2 {
		return Status{}, errors.New("proc status: VmRSS or VmHWM missing")
	}
	return st, nil
}

// ReadStatus reads /proc/<pid>/status.
func ReadStatus(pid int) (Status, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Status{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	st, err := ParseStatus(raw)
	if err != nil {
		return Status{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return st, nil
}

// ReadStats reads the stat of each of pids; a process that ended meanwhile is left out.
func ReadStats(pids []int) []Stat {
	out := make([]Stat, 0, len(pids))
	for _, pid := range pids {
		if st, err := ReadStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// OnCPU is the time pid's threads running now have spent on a CPU, to the nanosecond: the
// first field of each /proc/<pid>/task/<tid>/schedstat, summed. Stat.CPU counts in clock ticks
// (10 ms), too coarse for a few milliseconds of work; a thread that ended is not counted.
func OnCPU(pid int) (time.Duration, error) {
	var sum time.Duration
	err := eachSchedstat(pid, func(_ int, onCPU, _ time.Duration) { sum += onCPU })
	return sum, err
}

// RunDelays adds to m, by thread id, how long each thread of pid running now has waited on
// a run queue, runnable but not running: the second field of its schedstat. Two readings
// apart show how long a process was starved of CPU meanwhile, thread by thread.
func RunDelays(pid int, m map[int]time.Duration) error {
	return eachSchedstat(pid, func(tid int, _, waited time.Duration) { m[tid] = waited })
}

// eachSchedstat calls f with the schedstat fields of each thread of pid; a thread that ended
// meanwhile is passed over.
func eachSchedstat(pid int, f func(tid int, onCPU, waited time.Duration)) error {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("threads of %d: %w", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended meanwhile
		}
		if err != nil {
			return fmt.Errorf("schedstat of %d/%s: %w", pid, t.Name(), err)
		}
		onCPU, waited, err := parseSchedstat(raw)
		if err != nil {
			return fmt.Errorf("thread %d/%s: %w", pid, t.Name(), err)
		}
		f(tid, onCPU, waited)
	}
	return nil
}

// ParseSchedstat reads the time on a CPU, the first of the three fields of a schedstat line.
func ParseSchedstat(raw []byte) (time.Duration, error) {
	onCPU, _, err := parseSchedstat(raw)
	return onCPU, err
}

// parseSchedstat reads the first two of the three fields of a schedstat line: the time on a
// CPU and the time waiting on a run queue, nanoseconds.
func parseSchedstat(raw []byte) (onCPU, waited time.Duration, err error) {
	f := bytes.Fields(raw)
	if len(f) != 3 {
		return 0, 0, fmt.Errorf("schedstat %.60q: %d fields, want 3", raw, len(f))
	}
	ns, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil || ns < 0 {
		return 0, 0, fmt.Errorf("schedstat %.60q: time on a CPU: not a count", raw)
	}
	wait, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || wait < 0 {
		return 0, 0, fmt.Errorf("schedstat %.60q: time waiting to run: not a count", raw)
	}
	return time.Duration(ns), time.Duration(wait), nil
}

// All reads the stat of every process, in one scan of /proc; processes that end meanwhile are
// left out.
func All() ([]Stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	out := make([]Stat, 0, len(entries))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended meanwhile
		}
		if st, err := ParseStat(raw); err == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// Children returns the direct children of pid, zombies included (see Stat.Zombie).
func Children(pid int) ([]Stat, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []Stat
	for _, st := range all {
		if st.PPID == pid {
			out = append(out, st)
		}
	}
	return out, nil
}

// Descendants returns roots and every live process below them, roots first, from one scan.
func Descendants(roots []int) ([]int, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	return descendants(roots, all), nil
}

func descendants(roots []int, all []Stat) []int {
	kids := map[int][]int{}
	for _, st := range all {
		if !st.Zombie() {
			kids[st.PPID] = append(kids[st.PPID], st.PID)
		}
	}
	out := append([]int(nil), roots...)
	seen := map[int]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	for i := 0; i < len(out); i++ {
		for _, k := range kids[out[i]] {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// OpenFDs counts the open file descriptors of pid.
func OpenFDs(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("open descriptors of %d: %w", pid, err)
	}
	return len(entries), nil
}

// Cmdline returns pid's command line with spaces between the arguments ("" once it ended).
func Cmdline(pid int) string {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
}

// UDPRcvbufErrors reads the host's count of UDP datagrams dropped because a socket's receive
// buffer was full (RcvbufErrors, /proc/net/snmp).
func UDPRcvbufErrors() (int64, error) {
	raw, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	return SNMPCounter(raw, "Udp", "RcvbufErrors")
}

// SNMPCounter reads one counter of /proc/net/snmp's text: the line of names and the line of
// values that follow the protocol's prefix ("Udp:").
func SNMPCounter(raw []byte, proto, name string) (int64, error) {
	var names [][]byte
	for line := range bytes.Lines(raw) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != proto+":" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if string(n) != name {
				continue
			}
			if i >= len(f) {
				break
			}
			v, err := strconv.ParseInt(string(f[i]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("snmp %s %s %q: not a count", proto, name, f[i])
			}
			return v, nil
		}
		break
	}
	return 0, fmt.Errorf("snmp: no %s %s", proto, name)
}
