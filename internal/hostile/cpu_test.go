package hostile

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
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
//
// Memory is the other thing a virtual machine can make slow behind the server's back: the first
// write to a page the kernel hands out costs a page fault, and under a hypervisor that backs
// guest memory on demand (or takes free pages back) that fault can cost 20 µs instead of a
// fraction of one; a process's faults also serialise on its memory map, so a thread that faults
// in a new segment buffer holds back the others. Measured on the 2-core development VM: 4.6 ms
// a MiB of fresh memory, so a flood that makes the server fill its documented window (tens of
// MiB in a second) stalls it for tens of milliseconds whatever its code does. A slow answer is
// put down to the machine's memory only when the server's page faults over the answer, at the
// cost this machine measures for one (pageFaultCost, the cheapest of three trials), add up to
// at least the answer's time over the bound. On a machine whose faults cost what they cost on
// bare metal (well under a microsecond), the same faults excuse under a few milliseconds.
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
	faults              int64 // page faults of the server process itself (minor and major)
	ok                  bool
}

// mark reads the machine's and the server's CPU times.
func (s *server) mark() cpuMark {
	m, ok := machineCPU()
	if !ok {
		return cpuMark{}
	}
	m.at = time.Now()
	m.server, m.faults, m.ok = treeCPU(s.pid)
	return m
}

// treeCPU is the CPU time of pid and every process below it: the user and system time of each,
// and of its children it has reaped (cutime, cstime), so that a child that ends between two
// readings is still counted; and the page faults of pid itself (a child's faults are made in
// its own memory map and hold none of the server's threads back).
func treeCPU(pid int) (time.Duration, int64, bool) {
	pids, err := procfs.Descendants([]int{pid})
	if err != nil || len(pids) == 0 {
		return 0, 0, false
	}
	var ticks, faults int64
	for i, p := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			if i == 0 {
				return 0, 0, false
			}
			continue // a child that ended meanwhile: its parent's cutime has it next time
		}
		end := bytes.LastIndexByte(raw, ')')
		if end < 0 {
			return 0, 0, false
		}
		f := bytes.Fields(raw[end+1:])
		if len(f) < 15 {
			return 0, 0, false
		}
		for j, v := range f[7:15] { // minflt, cminflt, majflt, cmajflt, utime, stime, cutime, cstime
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return 0, 0, false
			}
			switch {
			case j >= 4:
				ticks += n
			case i == 0 && (j == 0 || j == 2):
				faults += n
			}
		}
	}
	return time.Duration(ticks) * clockTick, faults, true
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

// pageFaultCost is what one page fault on fresh anonymous memory costs on this machine: the
// cheapest of three trials, each writing one byte to every page of a new 16 MiB mapping.
var pageFaultCost = sync.OnceValue(func() time.Duration {
	const size = 16 << 20
	page := os.Getpagesize()
	best := time.Duration(-1)
	for range 3 {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0 // no measure: no slow answer is put down to memory
		}
		start := time.Now()
		for off := 0; off < size; off += page {
			b[off] = 1
		}
		took := time.Since(start)
		_ = syscall.Munmap(b)
		if best < 0 || took < best {
			best = took
		}
	}
	return best / time.Duration(size/page)
})
