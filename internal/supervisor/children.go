package supervisor

import (
	"slices"
	"sync"
)

// running is the set of children Command.Run started and has not reaped yet, in the whole
// server: what the metrics and the cluster meter count, by process id, without reading every
// process of the host from /proc.
var running = struct {
	sync.Mutex
	pids map[int]struct{}
}{pids: map[int]struct{}{}}

// Children returns the process ids of the children Command.Run started and has not reaped
// yet, in ascending order.
func Children() []int {
	running.Lock()
	defer running.Unlock()
	out := make([]int, 0, len(running.pids))
	for pid := range running.pids {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// adopt counts pid as running until the returned func is called (once it is reaped).
func adopt(pid int) (forget func()) {
	running.Lock()
	running.pids[pid] = struct{}{}
	running.Unlock()
	return func() {
		running.Lock()
		delete(running.pids, pid)
		running.Unlock()
	}
}
