package cluster

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/sysstats"
)

// Meter measures what a node reports about its room for work at each heartbeat.
type Meter struct {
	// FFmpeg is the program whose children count as ffmpeg children (compared by base name).
	// Default: "ffmpeg".
	FFmpeg string
	// FFmpegMax is how many ffmpeg children the node runs at most; 0: no limit.
	FFmpegMax int
	// CPU counts the machine's CPU share in use, sampled every renewal interval. Default
	// false: placement goes by ffmpeg children and leases.
	CPU bool
	// Children lists the process ids of the server's child processes running now (the
	// supervisor's); default: every direct child, found by reading all of /proc.
	Children func() []int
}

// measure is the capacity with the last CPU sample busy; running is the processes running,
// counted as the children where /proc cannot be read.
func (m Meter) measure(busy float64, running int) Capacity {
	name := m.FFmpeg
	if name == "" {
		name = "ffmpeg"
	}
	kids, err := m.countFFmpeg(filepath.Base(name))
	if err != nil {
		kids = running
	}
	if !m.CPU {
		busy = 0
	}
	return Capacity{CPUs: float64(runtime.NumCPU()), CPUBusy: busy, FFmpegMax: m.FFmpegMax, FFmpeg: kids}
}

// sampleCPU measures the machine's CPU share in use; false when the meter does not count it
// or it cannot be read.
func (m Meter) sampleCPU(ctx context.Context) (float64, bool) {
	if !m.CPU {
		return 0, false
	}
	share, err := sysstats.CPUShare(ctx)
	return share, err == nil
}

// countFFmpeg counts the server's live children whose program is name: those m.Children
// lists, or else those read from /proc.
func (m Meter) countFFmpeg(name string) (int, error) {
	if m.Children == nil {
		return countChildren(os.Getpid(), name)
	}
	return countNamed(procfs.ReadStats(m.Children()), name), nil
}

// countChildren counts the live children of pid whose program is name, from /proc.
func countChildren(pid int, name string) (int, error) {
	kids, err := procfs.Children(pid)
	if err != nil {
		return 0, err
	}
	return countNamed(kids, name), nil
}

// countNamed counts the live processes of kids whose program (the first word of the command
// line, without its folder) is name.
func countNamed(kids []procfs.Stat, name string) int {
	n := 0
	for _, k := range kids {
		if k.Zombie() {
			continue
		}
		if f := strings.Fields(procfs.Cmdline(k.PID)); len(f) > 0 && filepath.Base(f[0]) == name {
			n++
		}
	}
	return n
}
