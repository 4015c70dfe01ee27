package bench

import (
	"fmt"
	"strings"
)

// Metrics of the SRT scenarios' rows, named once: the checks and the recorded baseline find
// rows by them.
const (
	metricCPU          = "CPU"
	metricPeakRSS      = "peak RSS"
	metricAloneRSS     = "peak RSS, publisher alone"
	metricRSSPerReader = "RSS per reader"
	metricFramesShort  = "frames not received, worst run"
	metricCCErrors     = "continuity errors, worst run"
	metricLatencyP50   = "latency beyond the configured 2 × 200 ms, median"
	metricLatencyP99   = "latency beyond the configured 2 × 200 ms, p99"
	metricLatencyMax   = "latency beyond the configured 2 × 200 ms, max"
	metricPacketsLost  = "TS packets lost, worst run"
)

// readersRows are the rows of srt-readers-50 after CPU and peak RSS: memory per reader and
// what the readers missed.
func readersRows(name string, s, r []RunResult) []Row {
	row := func(metric, unit string, f func([]RunResult) float64) Row {
		return Row{Scenario: name, Metric: metric, Unit: unit, Sluice: f(s), Ref: f(r)}
	}
	frames := row(metricFramesShort, "frames", worst(func(x RunResult) float64 { return float64(x.FramesShort) }))
	frames.Note = fmt.Sprintf("summed over the %d receivers, each from the key frame it started at, of %s frames sent a run; after a receiver's last frame (at the publisher's end), worst run: sluice %s, ref %s",
		readersN, num(medianOf(func(x RunResult) float64 { return float64(x.FramesSent) })(s)),
		num(worst(func(x RunResult) float64 { return float64(x.FramesShortEnd) })(s)),
		num(worst(func(x RunResult) float64 { return float64(x.FramesShortEnd) })(r)))
	cc := row(metricCCErrors, "TS packets", worst(func(x RunResult) float64 { return float64(x.CCErrors) }))
	cc.Note = fmt.Sprintf("sluice's drop warnings, worst run: %s", num(worst(func(x RunResult) float64 { return float64(x.DropWarnings) })(s)))
	return []Row{
		row(metricAloneRSS, "MiB", medianOf(func(x RunResult) float64 { return float64(x.AloneRSS) / (1 << 20) })),
		row(metricRSSPerReader, "MB", medianOf(func(x RunResult) float64 {
			return rssPerReader(x.Usage.PeakRSS, x.AloneRSS, x.Readers) / 1e6
		})),
		frames, cc,
	}
}

// relayRows are the rows of srt-relay after CPU and peak RSS: the latency each payload took
// beyond the configured one, pooled over the runs, and what the receiver missed.
func relayRows(name string, s, r []RunResult) []Row {
	row := func(metric, unit string, f func([]RunResult) float64) Row {
		return Row{Scenario: name, Metric: metric, Unit: unit, Sluice: f(s), Ref: f(r)}
	}
	lat := func(x RunResult) []float64 { return x.Latencies }
	p50 := row(metricLatencyP50, "ms", pooled(lat, 50))
	p50.Note = fmt.Sprintf("%d / %d payloads", countSamples(s, lat), countSamples(r, lat))
	lost := row(metricPacketsLost, "TS packets", worst(func(x RunResult) float64 { return float64(x.PacketsLost) }))
	lost.Note = fmt.Sprintf("frames not received, worst run: sluice %s, ref %s; packets not found in the clip, worst run: sluice %s, ref %s",
		num(worst(func(x RunResult) float64 { return float64(x.FramesShort) })(s)),
		num(worst(func(x RunResult) float64 { return float64(x.FramesShort) })(r)),
		num(worst(func(x RunResult) float64 { return float64(x.Unplaced) })(s)),
		num(worst(func(x RunResult) float64 { return float64(x.Unplaced) })(r)))
	return []Row{p50, row(metricLatencyP99, "ms", pooled(lat, 99)), row(metricLatencyMax, "ms", pooled(lat, 100)), lost}
}

// countSamples counts the samples f gives over runs.
func countSamples(runs []RunResult, f func(RunResult) []float64) int {
	n := 0
	for _, x := range runs {
		n += len(f(x))
	}
	return n
}

// withRecorded fills the reference column of a Baseline scenario that ran without the
// gosrt-based build from the figures recorded with it, and says so in the first row's note.
func withRecorded(rows []Row, rec recordedBaseline) []Row {
	if len(rows) == 0 || len(rec.Figures) == 0 {
		return rows
	}
	for i := range rows {
		if v, ok := rec.Figures[rows[i].Metric]; ok {
			rows[i].Ref, rows[i].Recorded = v, true
		}
	}
	rows[0].Note = strings.TrimSpace(rec.Label() + " " + rows[0].Note)
	return rows
}
