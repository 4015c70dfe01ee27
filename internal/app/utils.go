package app

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/storage"
)

// Utilities serves the system utilities of spec 4.4.
type Utilities struct {
	DataDir string
	Speed   *SpeedTester
	APIPort int
	Manager *Manager
	Store   *storage.Store
}

var _ api.Utils = (*Utilities)(nil)

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

// ServerStat implements api.Utils.
func (u *Utilities) ServerStat(ctx context.Context) (any, error) {
	pct, err := cpu.PercentWithContext(ctx, cpuSample, false)
	if err != nil || len(pct) == 0 {
		return nil, fmt.Errorf("cpu usage: %w", err)
	}
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	du, err := disk.UsageWithContext(ctx, u.DataDir)
	if err != nil {
		return nil, fmt.Errorf("disk usage of %s: %w", u.DataDir, err)
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

// SpeedTest implements api.Utils.
func (u *Utilities) SpeedTest(ctx context.Context) (any, error) { return u.Speed.Run(ctx) }

// ListeningPorts implements api.Utils: the service's own listeners (the API port and the ports
// claimed by running entities) that the kernel's socket tables show this process holding now.
func (u *Utilities) ListeningPorts(ctx context.Context) ([]storage.PortKey, error) {
	open, err := ownSockets()
	if err != nil {
		return nil, err
	}
	var out []storage.PortKey
	if k := (storage.PortKey{Port: u.APIPort, Transport: storage.TCP}); open[k] {
		out = append(out, k)
	}
	running := map[string]bool{}
	for _, k := range u.Manager.Running() {
		running[k.id] = true
	}
	claims, err := u.Store.PortClaims(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range claims {
		if running[c.EntityID] && open[c.Key()] {
			out = append(out, c.Key())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Transport < out[j].Transport
	})
	return out, nil
}
