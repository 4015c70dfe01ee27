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

// cpuMark is a reading, at a time, of the machine's CPU time (busy and total, over every CPU)
// and the server's (its own and its children's: the ffmpeg it runs is its work too).
type cpuMark struct {
	at                  time.Time
	busy, total, server time.Duration
	ok                  bool
}

// mark reads the machine's and the server's CPU times.
func (s *server) mark() cpuMark {
	m, ok := machineCPU()
	if !ok {
		return cpuMark{}
	}
	m.at = time.Now()
	m.server, m.ok = treeCPU(s.pid)
	return m
}

// treeCPU is the CPU time of pid and every process below it: the user and system time of each,
// and of its children it has reaped (cutime, cstime), so that a child that ends between two
// readings is still counted.
func treeCPU(pid int) (time.Duration, bool) {
	pids, err := procfs.Descendants([]int{pid})
	if err != nil || len(pids) == 0 {
		return 0, false
	}
	var ticks int64
	for i, p := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			if i == 0 {
				return 0, false
			}
			continue // a child that ended meanwhile: its parent's cutime has it next time
		}
		end := bytes.LastIndexByte(raw, ')')
		if end < 0 {
			return 0, false
		}
		f := bytes.Fields(raw[end+1:])
		if len(f) < 15 {
			return 0, false
		}
		for _, v := range f[11:15] { // utime, stime, cutime, cstime
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return 0, false
			}
			ticks += n
		}
	}
	return time.Duration(ticks) * clockTick, true
}

// around returns the last mark at or before from and the first at or after to.
func around(marks []cpuMark, from, to time.Time) (a, b cpuMark) {
	for _, m := range marks {
		if !m.at.After(from) {
			a = m
		}
		if !m.at.Before(to) {
			return a, m
		}
	}
	return a, cpuMark{}
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
