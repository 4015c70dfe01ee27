package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStat is what the soak reads from /proc/<pid>/stat.
type ProcStat struct {
	PID   int
	State byte // R, S, D, Z, ...
	PPID  int
}

// ParseProcStat reads the pid, state and parent pid of a /proc/<pid>/stat line. The command
// name sits in parentheses and may hold spaces and parentheses, so the fields are read after
// the last ')'.
func ParseProcStat(raw []byte) (ProcStat, error) {
	open := bytes.IndexByte(raw, '(')
	end := bytes.LastIndexByte(raw, ')')
	if open < 1 || end < open {
		return ProcStat{}, fmt.Errorf("proc stat %q: no (comm)", truncate(raw))
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(raw[:open])))
	if err != nil {
		return ProcStat{}, fmt.Errorf("proc stat %q: pid: %w", truncate(raw), err)
	}
	f := bytes.Fields(raw[end+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return ProcStat{}, fmt.Errorf("proc stat %q: want state and ppid after the command", truncate(raw))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return ProcStat{}, fmt.Errorf("proc stat %q: ppid: %w", truncate(raw), err)
	}
	return ProcStat{PID: pid, State: f[0][0], PPID: ppid}, nil
}

// ParseVmRSS returns the resident set size in bytes from the text of /proc/<pid>/status
// (its "VmRSS:  1234 kB" line).
func ParseVmRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("proc status: VmRSS line %q: want <n> kB", sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc status: VmRSS %q: %w", f[0], err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("proc status: no VmRSS line")
}

// Child is a child process found in /proc.
type Child struct {
	PID   int
	State byte
	Cmd   string // its command line, spaces between arguments
}

// Children lists the child processes of pid, zombies included (a zombie is a child its parent
// did not wait for: a leak too), by reading every /proc/<n>/stat.
func Children(pid int) ([]Child, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	var out []Child
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended meanwhile
		}
		st, err := ParseProcStat(raw)
		if err != nil || st.PPID != pid {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, Child{PID: n, State: st.State, Cmd: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return out, nil
}

// OpenFDs counts the open file descriptors of pid.
func OpenFDs(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("open descriptors of %d: %w", pid, err)
	}
	return len(entries), nil
}

// RSS returns the resident set size of pid in bytes.
func RSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("status of %d: %w", pid, err)
	}
	return ParseVmRSS(raw)
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
