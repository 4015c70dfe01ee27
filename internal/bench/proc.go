package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on Linux.
const clockTick = 10 * time.Millisecond

// ProcSample is one reading of a process's counters from /proc.
type ProcSample struct {
	CPU time.Duration // user + system time since the process started
	RSS int64         // resident set size now, bytes (VmRSS)
	HWM int64         // peak resident set size, bytes (VmHWM)
}

// ReadProc reads pid's CPU time and memory from /proc.
func ReadProc(pid int) (ProcSample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcSample{}, fmt.Errorf("read proc of pid %d: %w", pid, err)
	}
	cpu, err := ParseStat(stat)
	if err != nil {
		return ProcSample{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcSample{}, fmt.Errorf("read proc of pid %d: %w", pid, err)
	}
	rss, hwm, err := ParseStatus(status)
	if err != nil {
		return ProcSample{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return ProcSample{CPU: cpu, RSS: rss, HWM: hwm}, nil
}

// ParseStat returns utime+stime of a /proc/<pid>/stat line.
func ParseStat(b []byte) (time.Duration, error) {
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted
	// after the last ')'; there state is field 0, utime field 11 and stime field 12.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("proc stat: no ')' after the command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("proc stat: cpu ticks %q: not a count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// ParseStatus returns VmRSS and VmHWM, in bytes, of a /proc/<pid>/status file.
func ParseStatus(b []byte) (rss, hwm int64, err error) {
	var seen int
	for line := range bytes.Lines(b) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &rss
		case "VmHWM":
			dst = &hwm
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, 0, fmt.Errorf("proc status: %s %q: want \"<n> kB\"", name, bytes.TrimSpace(rest))
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("proc status: %s %q: not a size", name, f[0])
		}
		*dst = n * 1024
		seen++
	}
	if seen < 2 {
		return 0, 0, errors.New("proc status: VmRSS or VmHWM missing")
	}
	return rss, hwm, nil
}
