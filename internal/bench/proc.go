package bench

import (
	"fmt"
	"github.com/sluicemedia/sluice/internal/procfs"
	"time"
)

// ProcSample is one reading of a process's counters from /proc.
type ProcSample struct {
	CPU time.Duration // user + system time since the process started
	RSS int64         // resident set size now, bytes (VmRSS)
	HWM int64         // peak resident set size, bytes (VmHWM)
}

// ReadProc reads pid's CPU time and memory from /proc.
func ReadProc(pid int) (ProcSample, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return ProcSample{}, fmt.Errorf("read proc of pid %d: %w", pid, err)
	}
	mem, err := procfs.ReadStatus(pid)
	if err != nil {
		return ProcSample{}, fmt.Errorf("read proc of pid %d: %w", pid, err)
	}
	return ProcSample{CPU: st.CPU, RSS: mem.RSS, HWM: mem.HWM}, nil
}
