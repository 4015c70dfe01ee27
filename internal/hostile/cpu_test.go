package hostile

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
)

// When a slow probe answer is the machine's doing rather than the server's. The suite shares
// a 2-core machine with the attack itself and with whatever else runs (other packages' tests
// under `make test`): a probe answer can be slow because no CPU was free for the server or the
// probe, which says nothing of the server. A slow answer is put down to CPU starvation only
// when, over its whole duration, the machine's CPUs were all but fully busy and the server
// itself used at most half of them. A server that stalls on a lock, a full queue or a missing
// descriptor leaves CPUs idle; a server that burns every CPU on an attack (as 100 concurrent
// password hashes did before issue 13) uses more than half: neither is excused.
const (
	// starvedBusy is the share of the machine's CPU time that must have been busy.
	starvedBusy = 0.9
	// starvedServerShare is the most of the machine's CPU time the server may have used.
	starvedServerShare = 0.5
	// clockTick is the unit of /proc/stat (USER_HZ, 100 on Linux).
	clockTick = 10 * time.Millisecond
)

// cpuMark is a reading of the machine's CPU time (busy and total, over every CPU) and the
// server's.
type cpuMark struct {
	busy, total, server time.Duration
	ok                  bool
}

// mark reads the machine's and the server's CPU times.
func (s *server) mark() cpuMark {
	m, ok := machineCPU()
	if !ok {
		return cpuMark{}
	}
	st, err := procfs.ReadStat(s.pid)
	if err != nil {
		return cpuMark{}
	}
	m.server = st.CPU
	return m
}

// machineCPU reads the first line of /proc/stat: user nice system idle iowait irq softirq
// steal ..., in clock ticks. Idle and iowait are free; the rest (steal included: time the
// hypervisor gave to someone else) is busy.
func machineCPU() (cpuMark, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuMark{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	sc := bufio.NewScanner(bytes.NewReader(line))
	sc.Split(bufio.ScanWords)
	if !sc.Scan() || sc.Text() != "cpu" {
		return cpuMark{}, false
	}
	var m cpuMark
	for i := 0; sc.Scan() && i < 8; i++ {
		n, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return cpuMark{}, false
		}
		d := time.Duration(n) * clockTick
		m.total += d
		if i != 3 && i != 4 {
			m.busy += d
		}
	}
	m.ok = true
	return m, true
}

// shares returns, from marks taken before and after an interval, the share of the machine's
// CPU time that was busy and the share the server used.
func shares(a, b cpuMark) (busy, server float64, ok bool) {
	if !a.ok || !b.ok || b.total <= a.total {
		return 0, 0, false
	}
	total := float64(b.total - a.total)
	return float64(b.busy-a.busy) / total, float64(b.server-a.server) / total, true
}
