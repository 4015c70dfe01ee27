package bench

import (
	"context"
	"github.com/sluicemedia/sluice/internal/procfs"
	"time"
)

// Usage is what one arm's processes used during a measurement window.
type Usage struct {
	CPU     time.Duration // user + system time spent in the window
	Wall    time.Duration // length of the window
	PeakRSS int64         // highest sum of VmRSS over the processes, sampled every 250 ms
	HWM     int64         // sum of the processes' VmHWM at the end
}

// CPUPercent is CPU time over wall time, in percent of one core.
func (u Usage) CPUPercent() float64 {
	if u.Wall <= 0 {
		return 0
	}
	return 100 * u.CPU.Seconds() / u.Wall.Seconds()
}

// Measure samples the processes pids returns (read again at each sample, so that children that
// come and go are seen) for d or until ctx ends.
func Measure(ctx context.Context, pids func() []int, d time.Duration) Usage {
	start := time.Now()
	base := map[int]time.Duration{}
	last := map[int]ProcSample{}
	read := func() int64 {
		var rss int64
		for _, pid := range pids() {
			s, err := ReadProc(pid)
			if err != nil {
				continue // the process ended; its last sample stands
			}
			if _, ok := base[pid]; !ok {
				// A process seen after the start is counted from its birth: it is part of the job.
				base[pid] = 0
				if time.Since(start) < time.Millisecond*100 {
					base[pid] = s.CPU
				}
			}
			last[pid] = s
			rss += s.RSS
		}
		return rss
	}
	u := Usage{PeakRSS: read()}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end.C:
			break loop
		case <-tick.C:
			u.PeakRSS = max(u.PeakRSS, read())
		}
	}
	u.PeakRSS = max(u.PeakRSS, read())
	u.Wall = time.Since(start)
	for pid, s := range last {
		u.CPU += s.CPU - base[pid]
		u.HWM += s.HWM
	}
	return u
}

// withChildren returns pids and their live descendants, read from /proc.
func withChildren(pids ...int) []int {
	if len(pids) == 0 {
		return nil
	}
	all, err := procfs.Descendants(pids)
	if err != nil {
		return pids
	}
	return all
}
