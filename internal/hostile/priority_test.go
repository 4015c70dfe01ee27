package hostile

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// CPU priorities while an attack runs. In deployment the attackers are other machines: what
// they send costs the server its own work and nothing else. Here they share two cores with the
// server, and a flood sender that runs at the server's priority takes CPU time the server would
// have had: a probe answer then measures the test machine, not the server (stop 24's CI: an
// answer of 156 ms while the flood sender and the server shared the CPUs 39/61). So while a
// case attacks, the test process (every attacker, the sampler, the clients it starts) runs at
// attackNice, below the server (nice 0, as an operator runs it), and the probe, which stands for
// the operator's own client, at probeNice, above both: a probe that waits for a CPU measures
// nothing of the server either. The server's ffmpeg children keep their own, lower, priority.
//
// Raising a priority (a lower nice value) takes privilege (CAP_SYS_NICE, or root): CI runs as
// root. Without it the suite runs every process at the same priority, as before, and logs so.
const (
	// attackNice is the nice value of the test process's threads during an attack: CFS weight
	// 110 against the server's 1024 a thread.
	attackNice = 10
	// probeNice is the probe process's: weight 9548.
	probeNice = -10
)

// canRaise tells whether this process may lower nice values (and so restore its own).
func canRaise() bool { return os.Geteuid() == 0 }

// setNice gives every thread of process pid the nice value n. Linux keeps nice values per
// thread, and a new thread inherits its creator's: the threads pid starts afterwards follow.
// The thread list is read twice, for a thread created while the first pass ran.
func setNice(pid, n int) error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("setpriority(%d, %d): %w", tid, n, err)
			}
		}
	}
	return nil
}
