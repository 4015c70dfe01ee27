// Package sysstats measures the server: CPU, memory and the data folder's disk (the API's
// getStat), and the network against another sluice or an Ookla binary (its speed test).
package sysstats

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/mem"
)

// ErrNotAvailable is wrapped when a measure cannot be made here: nothing to measure against,
// or the peer or the binary failed.
var ErrNotAvailable = errors.New("not available")

// ServerStat is the spec's server statistic (2.7).
type ServerStat struct {
	CPUUsage float64   `json:"cpuUsage"` // percent over a short sample
	RAM      RAMStat   `json:"RAM"`
	Drive    DriveStat `json:"drive"`
}

// RAMStat is memory in MB and percent, as numbers.
type RAMStat struct {
	TotalMemMb        float64 `json:"totalMemMb"`
	UsedMemMb         float64 `json:"usedMemMb"`
	FreeMemMb         float64 `json:"freeMemMb"`
	UsedMemPercentage float64 `json:"usedMemPercentage"`
	FreeMemPercentage float64 `json:"freeMemPercentage"`
}

// DriveStat is the data folder's filesystem in GB and percent, as strings with two decimals.
type DriveStat struct {
	TotalGb        string `json:"totalGb"`
	UsedGb         string `json:"usedGb"`
	FreeGb         string `json:"freeGb"`
	UsedPercentage string `json:"usedPercentage"`
	FreePercentage string `json:"freePercentage"`
}

// cpuSample is how long CPU usage is measured.
const cpuSample = 250 * time.Millisecond

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// CPUShare is the share of the machine's CPUs in use, 0 to 1, measured over cpuSample (a
// cluster node's capacity).
func CPUShare(ctx context.Context) (float64, error) {
	pct, err := cpu.PercentWithContext(ctx, cpuSample, false)
	if err != nil || len(pct) == 0 {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	return min(max(pct[0]/100, 0), 1), nil
}

// Read measures the server now: CPU usage over cpuSample, memory, and the filesystem that
// holds dataDir.
func Read(ctx context.Context, dataDir string) (ServerStat, error) {
	pct, err := cpu.PercentWithContext(ctx, cpuSample, false)
	if err != nil || len(pct) == 0 {
		return ServerStat{}, fmt.Errorf("cpu usage: %w", err)
	}
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return ServerStat{}, fmt.Errorf("memory: %w", err)
	}
	du, err := disk.UsageWithContext(ctx, dataDir)
	if err != nil {
		return ServerStat{}, fmt.Errorf("disk usage of %s: %w", dataDir, err)
	}
	const mb, gb = 1 << 20, 1 << 30
	used := vm.Total - vm.Available
	st := ServerStat{CPUUsage: round2(pct[0])}
	st.RAM = RAMStat{
		TotalMemMb:        round2(float64(vm.Total) / mb),
		UsedMemMb:         round2(float64(used) / mb),
		FreeMemMb:         round2(float64(vm.Available) / mb),
		UsedMemPercentage: round2(100 * float64(used) / float64(vm.Total)),
		FreeMemPercentage: round2(100 * float64(vm.Available) / float64(vm.Total)),
	}
	// Used is what the filesystem reports in use; Free is what an unprivileged writer can use.
	total := float64(du.Used + du.Free)
	st.Drive = DriveStat{
		TotalGb:        fmt.Sprintf("%.2f", total/gb),
		UsedGb:         fmt.Sprintf("%.2f", float64(du.Used)/gb),
		FreeGb:         fmt.Sprintf("%.2f", float64(du.Free)/gb),
		UsedPercentage: fmt.Sprintf("%.2f", 100*float64(du.Used)/total),
		FreePercentage: fmt.Sprintf("%.2f", 100*float64(du.Free)/total),
	}
	return st, nil
}
