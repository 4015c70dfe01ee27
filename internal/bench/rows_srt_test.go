package bench

import (
	"math"
	"strings"
	"testing"
)

// srtOutcome is an outcome of srt-readers-50 and srt-relay; ref makes the gosrt build's runs of
// the readers.
func srtOutcome(ref bool) *Outcome {
	readers := func(cpu float64, peak, alone int64, short, end, cc int) RunResult {
		return RunResult{Usage: Usage{CPU: durationOf(cpu), Wall: durationOf(100), PeakRSS: peak}, AloneRSS: alone, Readers: 50,
			FramesSent: 400, FramesShort: short, FramesShortEnd: end, CCErrors: cc}
	}
	relay := func(lost, unplaced int, lat ...float64) RunResult {
		return RunResult{Usage: Usage{CPU: durationOf(10), Wall: durationOf(100)}, Latencies: lat, PacketsLost: lost, Unplaced: unplaced}
	}
	o := &Outcome{
		Scenarios: []Scenario{{Name: "srt-readers-50", Baseline: true}, {Name: "srt-relay"}},
		Runs: map[string]map[Arm][]RunResult{
			"srt-readers-50": {ArmSluice: {readers(10, 70e6, 30e6, 0, 0, 0), readers(12, 90e6, 30e6, 0, 0, 0), readers(11, 80e6, 30e6, 0, 0, 0)}},
			"srt-relay": {
				ArmSluice: {relay(0, 2, 1, 2, 3), relay(0, 2, 4, 5, 9)},
				ArmRef:    {relay(3, 3, 2, 2, 2), relay(0, 3, 2, 2, 20)},
			},
		},
	}
	if ref {
		o.Runs["srt-readers-50"][ArmRef] = []RunResult{readers(40, 330e6, 30e6, 200, 200, 1), readers(50, 330e6, 30e6, 150, 150, 0)}
	}
	return o
}

// findRow returns the row of scenario and metric.
func findRow(t *testing.T, rows []Row, scenario, metric string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Scenario == scenario && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s %q in %+v", scenario, metric, rows)
	return Row{}
}

// rowCheck is a row's metric, what makes the row wrong, and the failure message (its verb
// takes the row).
type rowCheck struct {
	metric string
	wrong  func(Row) bool
	msg    string
}

// checkRows fails at the first row of scenario that a check finds wrong.
func checkRows(t *testing.T, rows []Row, scenario string, checks []rowCheck) {
	t.Helper()
	for _, c := range checks {
		if r := findRow(t, rows, scenario, c.metric); c.wrong(r) {
			t.Fatalf(c.msg, r)
		}
	}
}

// TestReadersRows: RSS per reader is the median over the runs of (peak − alone) / readers, in
// MB; losses are the worst run's; with the gosrt build's runs its figures are the reference.
func TestReadersRows(t *testing.T) {
	checkRows(t, srtOutcome(true).Rows(), "srt-readers-50", []rowCheck{
		{metricRSSPerReader, func(r Row) bool { return r.Sluice != 1 || r.Ref != 6 || r.Unit != "MB" || r.Recorded },
			"RSS per reader %+v, want 1 MB against 6 MB"},
		{metricAloneRSS, func(r Row) bool { return r.Sluice < 28.6 || r.Sluice > 28.7 }, "RSS alone %+v, want 28.6 MiB"},
		{metricCPU, func(r Row) bool { return r.Sluice != 11 || r.Ref != 45 }, "CPU %+v"},
		{metricFramesShort, func(r Row) bool {
			return r.Sluice != 0 || r.Ref != 200 || !strings.Contains(r.Note, "worst run: sluice 0, ref 200")
		}, "frames %+v"},
		{metricCCErrors, func(r Row) bool { return r.Sluice != 0 || r.Ref != 1 }, "continuity %+v"},
	})
}

// TestReadersRecorded: without the gosrt build's runs the reference column holds the recorded
// figures, marked as such, and the checks say so.
func TestReadersRecorded(t *testing.T) {
	saved := gosrtReaders
	defer func() { gosrtReaders = saved }()
	gosrtReaders = recordedBaseline{Date: "2026-01-02", Commit: "0123456789abcdef", Machine: "test machine",
		Figures: map[string]float64{metricCPU: 44, metricRSSPerReader: 5.5}}
	rows := srtOutcome(false).Rows()
	checkRows(t, rows, "srt-readers-50", []rowCheck{
		{metricCPU, func(r Row) bool {
			return r.Ref != 44 || !r.Recorded || !strings.Contains(r.Note, "RECORDED on 2026-01-02") || !strings.Contains(r.Note, "commit 0123456789ab;")
		}, "CPU row %+v"},
		{metricRSSPerReader, func(r Row) bool { return r.Ref != 5.5 || !r.Recorded }, "RSS row %+v"},
		{metricCCErrors, func(r Row) bool { return r.Recorded || !math.IsNaN(r.Ref) }, "a figure not recorded got a reference: %+v"},
	})
	checks := strings.Join(Checks(rows), "\n")
	if !strings.Contains(checks, "ratio 0.250") || !strings.Contains(checks, "RECORDED earlier") {
		t.Fatalf("checks %s", checks)
	}
	// What BaselineLiteral prints for a run that measured the build reads back the same.
	lit := recordLiteral(srtOutcome(true).Rows(), "srt-readers-50", "2026-01-02", "abc", "m")
	if !strings.Contains(lit, `"CPU": 45,`) || !strings.Contains(lit, `"RSS per reader": 6,`) || strings.Contains(lit, "srt-relay") {
		t.Fatalf("literal %s", lit)
	}
}

// TestRelayRows: the latency rows pool every payload of every run; losses are the worst run's.
func TestRelayRows(t *testing.T) {
	checkRows(t, srtOutcome(true).Rows(), "srt-relay", []rowCheck{
		{metricLatencyP50, func(r Row) bool { return r.Sluice != 3.5 || r.Ref != 2 || r.Note != "6 / 6 payloads" }, "median %+v"},
		{metricLatencyMax, func(r Row) bool { return r.Sluice != 9 || r.Ref != 20 }, "max %+v"},
		{metricPacketsLost, func(r Row) bool {
			return r.Sluice != 0 || r.Ref != 3 || !strings.Contains(r.Note, "packets not found in the clip, worst run: sluice 2.00, ref 3.00")
		}, "lost %+v"},
	})
}

// TestSRTChecks: each SRT target is stated with its verdict.
func TestSRTChecks(t *testing.T) {
	rows := srtOutcome(true).Rows()
	rows = append(rows, Row{Scenario: "player-srt", Metric: "CPU", Sluice: 3, Ref: 2.5})
	checks := strings.Join(Checks(rows), "\n")
	for _, want := range []string{
		"SRT input → player uses at most 1.00× the CPU of ffmpeg (libsrt) reading the same SRT stream and writing the same HLS: **no** (ratio 1.20",
		"50 SRT readers of one stream through the SRT server module use at most 0.300× the CPU of the gosrt-based build: **yes** (ratio 0.244",
		"At most 1.00 MB of RSS per SRT reader: **yes** (sluice 1.00 MB, gosrt build 6.00 MB",
		"Zero lost packets at the 50 SRT readers: **yes**",
		"adds at most 5.00 ms beyond the configured latency, p99: **no** (p99 8.80 ms",
	} {
		if !strings.Contains(checks, want) {
			t.Errorf("checks lack %q:\n%s", want, checks)
		}
	}
}

// TestMicroChecks: the allocations of the link's receive and send paths are read from the
// micro-benchmarks' output of that package only.
func TestMicroChecks(t *testing.T) {
	out := `goos: linux
pkg: github.com/sluicemedia/sluice/protocols/srt/wire
BenchmarkReceivePath-2   	 100	 10 ns/op	 0 B/op	 3 allocs/op
pkg: github.com/sluicemedia/sluice/protocols/srt/link
BenchmarkReceivePath-2   	  812345	      1402 ns/op	 938.70 MB/s	       0 B/op	       0 allocs/op
BenchmarkSendPath-2      	  612345	      1893 ns/op	 695.20 MB/s	       0 B/op	       0 allocs/op
BenchmarkLoopback-2      	  100000	     26000 ns/op	  50.61 MB/s	      24 B/op	       1 allocs/op
`
	got := strings.Join(MicroChecks(out), "")
	if !strings.Contains(got, "**yes** (BenchmarkReceivePath 0 allocs/op, BenchmarkSendPath 0 allocs/op") {
		t.Fatalf("micro check %s", got)
	}
	got = strings.Join(MicroChecks(strings.Replace(out, "       0 B/op	       0 allocs/op\nBenchmarkSend", "      48 B/op	       1 allocs/op\nBenchmarkSend", 1)), "")
	if !strings.Contains(got, "**no** (BenchmarkReceivePath 1.00 allocs/op") {
		t.Fatalf("micro check with an allocation %s", got)
	}
	if got := strings.Join(MicroChecks("pkg: github.com/sluicemedia/sluice/internal/stream\nBenchmarkFanOut100-2 1 1 ns/op 0 allocs/op\n"), ""); !strings.Contains(got, "**not measured**") {
		t.Fatalf("micro check without the link's benchmarks %s", got)
	}
}

// TestRecordedBaselineMetrics: every figure recorded with the gosrt build names a row of
// srt-readers-50, so that none is dropped silently when a metric is renamed.
func TestRecordedBaselineMetrics(t *testing.T) {
	if len(gosrtReaders.Figures) == 0 || gosrtReaders.Date == "" || len(gosrtReaders.Commit) != 40 {
		t.Fatalf("recorded baseline incomplete: %+v", gosrtReaders)
	}
	rows := srtOutcome(false).Rows()
	for metric := range gosrtReaders.Figures {
		if r := findRow(t, rows, "srt-readers-50", metric); !r.Recorded {
			t.Errorf("row %q does not take the recorded figure", metric)
		}
	}
}
