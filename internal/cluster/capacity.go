package cluster

import "math"

// Capacity is what a node reports about its room for work at every heartbeat (the capacity
// column of its row, as JSON). Placement compares the free share of CPU and of ffmpeg children.
type Capacity struct {
	// CPUs is how many cores the node offers.
	CPUs float64 `json:"cpus"`
	// CPUBusy is the share of those cores in use, 0 to 1.
	CPUBusy float64 `json:"cpu_busy"`
	// FFmpegMax is how many ffmpeg children the node runs at most; 0: no limit.
	FFmpegMax int `json:"ffmpeg_max"`
	// FFmpeg is how many ffmpeg children it runs now.
	FFmpeg int `json:"ffmpeg"`
}

// free is the share of the node still free, 0 to 1, holding leases live leases: the smaller of
// the free CPU share and the free share of ffmpeg children. A lease counts as one child until
// the children are reported, so that placements between two heartbeats still spread. Values
// from another node's row are clamped, never trusted.
func (c Capacity) free(leases int) float64 {
	busy := c.CPUBusy
	if math.IsNaN(busy) || busy < 0 {
		busy = 0
	}
	cpu := 1 - math.Min(busy, 1)
	if c.FFmpegMax <= 0 {
		return cpu
	}
	used := max(c.FFmpeg, leases, 0)
	children := 1 - float64(used)/float64(c.FFmpegMax)
	return math.Max(0, math.Min(cpu, children))
}

// full tells whether the node has no ffmpeg child left to give, holding leases live leases.
func (c Capacity) full(leases int) bool {
	return c.FFmpegMax > 0 && max(c.FFmpeg, leases) >= c.FFmpegMax
}
