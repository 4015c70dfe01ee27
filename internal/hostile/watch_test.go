package hostile

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// What every case asserts while it attacks, and how it measures it.
const (
	// probeEvery is the pause between two probe requests.
	probeEvery = 100 * time.Millisecond
	// probeBound is the slowest answer to a normal API call allowed during an attack (issue 13).
	probeBound = 100 * time.Millisecond
	// probeTimeout gives up on one probe request: an answer at least that slow, judged as the
	// others are (see starvedBusy).
	probeTimeout = 5 * time.Second
	// sampleEvery is the pause between two readings of the server's RSS.
	sampleEvery = 100 * time.Millisecond
	// heapEvery is how many RSS readings go by between two readings of the server's Go heap
	// (/debug/vars on its debug port: microseconds of its time).
	heapEvery = 2
	// minProbes is the fewest probe answers a case needs for its slowest answer to mean
	// anything: one second of attack.
	minProbes = 10

	// gcFactor: with GOGC=100 and no memory limit, the Go heap may grow to twice what is live
	// before the collector runs, so the RSS a live budget costs is counted twice.
	gcFactor = 2
	// runtimeSlack is what the Go runtime of a busy server may add to the baseline whatever is
	// held: goroutine stacks, OS threads (a few per core plus one per blocking system call),
	// allocator and collector metadata, the probe's connections.
	runtimeSlack = 32 << 20
	// connBytes is the most one idle or half-sent TCP connection may cost the server: net/http
	// or a protocol's read buffer (up to 16 KiB), a write buffer (4 KiB), a goroutine stack
	// (8 to 32 KiB) and the connection's own state.
	connBytes = 64 << 10
)

// bound is a case's RSS bound above its baseline, with the reason for the figure.
type bound struct {
	bytes int64
	why   string
}

// budget is the bound for a documented live budget of live bytes: counted gcFactor times,
// plus runtimeSlack.
func budget(live int64, why string) bound {
	return bound{bytes: gcFactor*live + runtimeSlack, why: why}
}

// figures is what the probe and the sampler measured during one attack.
type figures struct {
	baseline, peak int64         // RSS before the attack, highest RSS seen (samples and VmHWM)
	heapBase       int64         // the Go heap allocated before the attack (HeapAlloc)
	heapPeak       int64         // the most seen
	samples        int           // RSS readings taken
	probes         int           // probe answers (200 OK)
	judged         int           // those not put down to CPU starvation or the machine's memory
	slowest        time.Duration // the slowest judged answer
	median         time.Duration // of every answer
	starved        []answer      // the answers put down to CPU starvation, slowest first
	paging         []answer      // the answers put down to the machine's memory, slowest first
	failures       []string      // probe requests that failed or answered another status
	took           time.Duration
	worst          []answer // the slowest three answers
	load           string   // the machine's load average at the end
}

// loadAvg is the machine's load average (1, 5 and 15 minutes), to read the figures against.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// watch runs a probe and an RSS sampler against the server until stop is called.
type watch struct {
	s     *server
	start time.Time
	done  chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	f       figures
	answers []answer
	marks   []cpuMark      // CPU times read with each RSS sample
	probeIn io.WriteCloser // the probe process's standard input: closing it stops the probe
	lowered bool           // the test process runs at attackNice (lowerAttackers)
}

// answer is one probe answer: when it was sent (after the watch started), how long it took,
// and when (after it was sent) its connection was up, its request written and the first byte
// of the answer read.
// It also has the share of the machine's CPU time that was busy meanwhile, the share the
// server used, and whether it was slow for want of a CPU (see starvedBusy).
type answer struct {
	sent                  time.Time
	at, took              time.Duration
	connect, wrote, first time.Duration
	busy, server          float64
	faults                int64 // the server's page faults over the answer (the marks around it)
	starved               bool  // slow for want of a CPU (see starvedBusy)
	paging                bool  // slow for the machine's memory (see pageFaultCost)
}

func (a answer) String() string {
	s := fmt.Sprintf("%v at +%v (connected %v, written %v, first byte %v", a.took.Round(100*time.Microsecond),
		a.at.Round(time.Millisecond), a.connect.Round(100*time.Microsecond), a.wrote.Round(100*time.Microsecond),
		a.first.Round(100*time.Microsecond))
	if a.took > probeBound {
		s += fmt.Sprintf("; CPUs %.0f%% busy, %.0f%% by the server and its children; %d page faults", 100*a.busy, 100*a.server, a.faults)
	}
	return s + ")"
}

// watch reads the server's RSS as the baseline, then starts the probe and the sampler.
func (s *server) watch() *watch {
	s.t.Helper()
	st, err := s.rss()
	if err != nil {
		s.t.Fatal(err)
	}
	w := &watch{s: s, start: time.Now(), done: make(chan struct{})}
	w.f.baseline, w.f.peak = st.RSS, st.RSS
	if w.f.heapBase, err = s.heap(); err != nil {
		s.t.Fatal(err)
	}
	w.f.heapPeak = w.f.heapBase
	w.marks = append(w.marks, s.mark())
	if err := w.startProbe(); err != nil {
		s.t.Fatalf("start the probe: %v", err)
	}
	w.lowerAttackers()
	s.t.Cleanup(w.restoreAttackers) // a case that fails before stop
	w.wg.Go(w.sample)
	w.trace()
	return w
}

// lowerAttackers puts the test process below the server for the attack (see attackNice), when
// it can put itself back afterwards.
func (w *watch) lowerAttackers() {
	if !canRaise() {
		w.s.t.Logf("not root: the attackers and the probe run at the server's CPU priority")
		return
	}
	if err := setNice(os.Getpid(), attackNice); err != nil {
		w.s.t.Fatalf("lower the attackers' priority: %v", err)
	}
	w.lowered = true
}

// restoreAttackers puts the test process back at the server's priority, so that the servers,
// publishers and players it starts after the attack run at the priority an operator's would.
func (w *watch) restoreAttackers() {
	if !w.lowered {
		return
	}
	w.lowered = false
	if err := setNice(os.Getpid(), 0); err != nil {
		w.s.t.Errorf("restore the test process's priority: %v", err)
	}
}

// traceEnv names a folder: when set, each watch also records a Go execution trace of the
// server over the first traceLength of the attack into <folder>/<test name>.trace, to see
// where a slow probe answer waited (go tool trace). Off by default: tracing costs the server
// CPU, and stop waits for the whole trace.
const (
	traceEnv    = "SLUICE_HOSTILE_TRACE"
	traceLength = 16 * time.Second
)

// trace starts the execution trace if traceEnv asks for one; stop waits for it to be written.
func (w *watch) trace() {
	dir := os.Getenv(traceEnv)
	if dir == "" {
		return
	}
	name := filepath.Join(dir, strings.ReplaceAll(w.s.t.Name(), "/", "_")+".trace")
	w.wg.Go(func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", w.s.debug, int(traceLength.Seconds())))
		if err != nil {
			w.s.t.Errorf("trace: %v", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(name)
		if err != nil {
			w.s.t.Errorf("trace: %v", err)
			return
		}
		defer f.Close()
		n, err := io.Copy(f, resp.Body)
		w.s.t.Logf("execution trace of the server: %s (%d bytes; %v)", name, n, err)
	})
}

// sample reads the server's RSS every sampleEvery.
func (w *watch) sample() {
	n := 1
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		st, err := w.s.rss()
		if err != nil {
			return // the server ended: alive() reports it
		}
		m := w.s.mark()
		var heap int64
		if n%heapEvery == 0 {
			heap, _ = w.s.heap()
		}
		n++
		w.mu.Lock()
		w.f.samples++
		w.f.peak = max(w.f.peak, st.RSS)
		w.f.heapPeak = max(w.f.heapPeak, heap)
		w.marks = append(w.marks, m)
		w.mu.Unlock()
	}
}

// stop ends the probe and the sampler and returns their figures. The peak includes the
// kernel's high-water mark (VmHWM), so that a peak between two samples is not missed.
func (w *watch) stop() figures {
	w.restoreAttackers()
	close(w.done)
	w.probeIn.Close()
	w.wg.Wait()
	w.f.took = time.Since(w.start)
	if st, err := w.s.rss(); err == nil {
		w.f.peak = max(w.f.peak, st.HWM, st.RSS)
	}
	w.marks = append(w.marks, w.s.mark())
	for i, a := range w.answers {
		if a.took <= probeBound {
			continue
		}
		m0, m1 := around(w.marks, a.sent, a.sent.Add(a.took))
		if busy, server, ok := shares(m0, m1); ok {
			a.busy, a.server, a.faults = busy, server, m1.faults-m0.faults
			a.starved = busy >= starvedBusy && server <= starvedServerShare
			a.paging = !a.starved && time.Duration(a.faults)*pageFaultCost() >= a.took-probeBound
			w.answers[i] = a
		}
	}
	w.f.probes = len(w.answers)
	if n := len(w.answers); n > 0 {
		sorted := slices.Clone(w.answers)
		slices.SortFunc(sorted, func(a, b answer) int { return cmp.Compare(b.took, a.took) })
		w.f.median = sorted[n/2].took
		w.f.worst = sorted[:min(3, n)]
		for _, a := range sorted {
			switch {
			case a.starved:
				w.f.starved = append(w.f.starved, a)
			case a.paging:
				w.f.paging = append(w.f.paging, a)
			default:
				w.f.judged++
				w.f.slowest = max(w.f.slowest, a.took)
			}
		}
	}
	w.f.load = loadAvg()
	return w.f
}

// check logs the figures and asserts the case's RSS bound and the probe's: the server is
// alive, peak RSS ≤ baseline + b, every probe answered 200 and the slowest within probeBound.
func (f figures) check(t *testing.T, s *server, b bound) {
	t.Helper()
	limit := f.baseline + b.bytes
	t.Logf("figures: attack %v; RSS baseline %.1f MiB, peak %.1f MiB (+%.1f MiB), bound %.1f MiB (+%.1f MiB: %s), %d samples; "+
		"Go heap %.1f MiB, peak %.1f MiB (+%.1f MiB, bound the same +%.1f MiB); "+
		"probe: %d answers, median %v, slowest %v (bound %v), %d failed, %d slow for want of a CPU, "+
		"%d slow for the machine's memory (a page fault costs %v here); slowest three: %v; load average %s",
		f.took.Round(time.Millisecond), mb(f.baseline), mb(f.peak), mb(f.peak-f.baseline), mb(limit), mb(b.bytes), b.why, f.samples,
		mb(f.heapBase), mb(f.heapPeak), mb(f.heapPeak-f.heapBase), mb(b.bytes),
		f.probes, f.median.Round(100*time.Microsecond), f.slowest.Round(100*time.Microsecond), probeBound, len(f.failures),
		len(f.starved), len(f.paging), pageFaultCost().Round(100*time.Nanosecond), f.worst, f.load)
	if f.peak > limit {
		t.Errorf("peak RSS %.1f MiB over the bound %.1f MiB (baseline %.1f MiB + %.1f MiB)", mb(f.peak), mb(limit), mb(f.baseline), mb(b.bytes))
	}
	if f.heapPeak-f.heapBase > b.bytes {
		t.Errorf("the Go heap grew by %.1f MiB, over the bound's %.1f MiB (memory the server allocated, resident or not)", mb(f.heapPeak-f.heapBase), mb(b.bytes))
	}
	if len(f.failures) > 0 {
		t.Errorf("%d probe requests failed during the attack: %q", len(f.failures), f.failures[:min(5, len(f.failures))])
	}
	if f.judged < minProbes {
		t.Errorf("only %d probe answers during the attack that CPU starvation or the machine's memory does not explain, want at least %d", f.judged, minProbes)
	}
	if f.slowest > probeBound {
		t.Errorf("the slowest probe answer took %v, over %v, while CPUs were free or the server used over half of them, and its page faults do not explain it", f.slowest, probeBound)
	}
	s.alive()
}

// mb is bytes in MiB.
func mb(n int64) float64 { return float64(n) / (1 << 20) }
