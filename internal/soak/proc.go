package soak

import (
	"github.com/sluicemedia/sluice/internal/procfs"
)

// Child is a child process found in /proc.
type Child struct {
	PID   int
	State byte
	Cmd   string // its command line, spaces between arguments
}

// Children lists the child processes of pid, zombies included (a zombie is a child its parent
// did not wait for: a leak too).
func Children(pid int) ([]Child, error) {
	kids, err := procfs.Children(pid)
	if err != nil {
		return nil, err
	}
	out := make([]Child, 0, len(kids))
	for _, k := range kids {
		out = append(out, Child{PID: k.PID, State: k.State, Cmd: procfs.Cmdline(k.PID)})
	}
	return out, nil
}

// OpenFDs counts the open file descriptors of pid.
func OpenFDs(pid int) (int, error) { return procfs.OpenFDs(pid) }

// RSS returns the resident set size of pid in bytes.
func RSS(pid int) (int64, error) {
	st, err := procfs.ReadStatus(pid)
	return st.RSS, err
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
