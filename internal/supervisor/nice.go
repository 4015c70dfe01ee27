package supervisor

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultNice is how much lower than the server's the CPU priority of child processes is unless
// SetNice says otherwise: a nice increment of 19, the lowest priority (CFS weight 15 against
// the server's 1024 at nice 0), so that ffmpeg children that encode or decode never starve the
// control plane (the API, the protocol stacks) of CPU, while still getting every cycle the
// server leaves idle. Weights add up over the children's threads: at nice 10 (weight 110), 40
// starting children outweighed the server's threads several times over and the API answered
// in up to 300 ms (issue 13); at 19 they weigh about as much as one server thread, and on
// Linux they are also put in the SCHED_IDLE policy (startChild), which weighs less again.
const DefaultNice = 19

// maxNice is the lowest CPU priority a process can have (Linux and BSD nice values run from
// -20 to 19).
const maxNice = 19

// childNice is the nice increment of the children started from now on.
var childNice atomic.Int32

func init() { childNice.Store(DefaultNice) }

// SetNice sets how much lower than the server's the CPU priority of every child started
// afterwards is: a nice increment, clamped to 0 (the server's own priority) to 19. The server
// sets it once at start from its configuration (--ffmpeg-nice). Children already running keep
// theirs.
func SetNice(n int) { childNice.Store(int32(min(max(n, 0), maxNice))) }

// Nice returns the nice increment children are started with.
func Nice() int { return int(childNice.Load()) }

// niceWarn logs once per process that the children's priority could not be lowered (a
// sandbox that forbids setpriority): they then run at the server's priority.
var niceWarn sync.Once

func warnNice(log *slog.Logger, err error) {
	niceWarn.Do(func() {
		log.Warn("cannot lower the CPU priority of child processes; they run at the server's", "nice", Nice(), "error", err)
	})
}
