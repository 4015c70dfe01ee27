package main

import (
	"os"
	"strings"
	"syscall"
)

// madvFree is the runtime setting the server runs with on Linux: memory the Go runtime gives
// back is released with MADV_FREE instead of MADV_DONTNEED. With MADV_DONTNEED every page given
// back costs a fresh page fault when the heap grows again; a media server's heap breathes by
// tens of MiB a second under load (segments kept and evicted, a reader's queue filled and
// drained), and on a virtual machine, where a fresh page costs 15–20 µs, a player fed a flood
// spent thousands of faults at a time refaulting what it had just given back: the API's answers
// waited behind them (the hostile suite's player-window-bytes, 100–220 ms). With MADV_FREE the
// kernel takes such pages only when it needs memory, and the heap reuses them without a
// fault. The cost is in the figures: freed pages count in the RSS until the kernel takes them,
// never beyond the peak the heap reached.
const madvFree = "madvdontneed=0"

// reexecWithMadvFree makes the process run with madvFree: the runtime reads this setting only
// at start, so a process started without it in GODEBUG executes itself again with it (same
// pid, same arguments). An operator's own madvdontneed in GODEBUG is kept. It returns only when
// it did not re-execute (the setting is there, or the executable cannot be found): the process
// then goes on as it is.
func reexecWithMadvFree() {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "madvdontneed=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + madvFree}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure
}
