package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Rows turns the outcome into the results table: medians over the runs.
func (o *Outcome) Rows() []Row {
	var rows []Row
	for _, sc := range o.Scenarios {
		s, r := o.Runs[sc.Name][ArmSluice], o.Runs[sc.Name][ArmRef]
		row := func(metric, unit string, f func([]RunResult) float64) Row {
			return Row{Scenario: sc.Name, Metric: metric, Unit: unit, Sluice: f(s), Ref: f(r)}
		}
		first := len(rows)
		rows = append(rows,
			row("CPU", "% of a core", medianOf(func(x RunResult) float64 { return x.Usage.CPUPercent() })),
			row("peak RSS", "MiB", medianOf(func(x RunResult) float64 { return float64(x.Usage.PeakRSS) / (1 << 20) })),
		)
		if hasAny(s, r, func(x RunResult) bool { return len(x.ScrapeCPU) > 0 }) {
			rows = append(rows, scrapeRow(sc.Name, s))
		}
		if hasAny(s, r, func(x RunResult) bool { return len(x.FirstPlaylist) > 0 }) {
			rows = append(rows, row("publish → first playlist", "s", medianOf(func(x RunResult) float64 { return Median(x.FirstPlaylist) })))
		}
		if hasAny(s, r, func(x RunResult) bool { return len(x.Delays) > 0 }) {
			m := row("last frame → segment listed, median", "ms", pooled(func(x RunResult) []float64 { return x.Delays }, 50))
			m.Note = fmt.Sprintf("%d / %d segments", countPooled(s), countPooled(r))
			rows = append(rows, m, row("last frame → segment listed, p99", "ms", pooled(func(x RunResult) []float64 { return x.Delays }, 99)))
		}
		if strings.HasPrefix(sc.Name, "fanout") {
			d := row("frames not received, worst run", "frames", worst(func(x RunResult) float64 { return float64(x.FramesShort) }))
			d.Note = fmt.Sprintf("of %s frames sent a run to each receiver; at RTMP receivers, worst run: sluice %s, ref %s",
				num(medianOf(func(x RunResult) float64 { return float64(x.FramesSent) })(s)),
				num(worst(func(x RunResult) float64 { return float64(x.FramesShortRTMP) })(s)),
				num(worst(func(x RunResult) float64 { return float64(x.FramesShortRTMP) })(r)))
			cc := row("continuity errors, worst run", "TS packets", worst(func(x RunResult) float64 { return float64(x.CCErrors) }))
			cc.Note = fmt.Sprintf("sluice's drop warnings, worst run: %s",
				num(worst(func(x RunResult) float64 { return float64(x.DropWarnings) })(s)))
			if w := worst(func(x RunResult) float64 { return float64(x.ReceiverDrops) })(append(slices.Clone(s), r...)); w > 0 {
				cc.Note += fmt.Sprintf("; the bench's RTMP receivers dropped %s units in a run: figures of that run are unsound", num(w))
			}
			rows = append(rows, d, cc)
			if tee := o.Runs[sc.Name][ArmTee]; len(tee) > 0 {
				rows = append(rows, teeRows(sc.Name, s, tee)...)
			}
		}
		switch {
		case strings.HasPrefix(sc.Name, "srt-readers"):
			rows = append(rows, readersRows(sc.Name, s, r)...)
		case sc.Name == "srt-relay":
			rows = append(rows, relayRows(sc.Name, s, r)...)
		}
		if sc.Baseline && len(r) == 0 {
			withRecorded(rows[first:], gosrtReaders)
		}
		if notes := runNotes(s, r); notes != "" {
			rows[len(rows)-1].Note = strings.TrimSpace(rows[len(rows)-1].Note + " " + notes)
		}
	}
	return rows
}

// medianOf is the median of f over runs.
func medianOf(f func(RunResult) float64) func([]RunResult) float64 {
	return func(runs []RunResult) float64 {
		xs := make([]float64, 0, len(runs))
		for _, x := range runs {
			if v := f(x); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		return Median(xs)
	}
}

// worst is the largest value of f over runs, NaN for none.
func worst(f func(RunResult) float64) func([]RunResult) float64 {
	return func(runs []RunResult) float64 {
		w := math.NaN()
		for _, x := range runs {
			if v := f(x); math.IsNaN(w) || v > w {
				w = v
			}
		}
		return w
	}
}

// pooled is the p-th percentile of f's samples of every run together.
func pooled(f func(RunResult) []float64, p float64) func([]RunResult) float64 {
	return func(runs []RunResult) float64 { return Percentile(pooledSamples(runs, f), p) }
}

// countPooled counts the delay samples of runs.
func countPooled(runs []RunResult) int {
	n := 0
	for _, x := range runs {
		n += len(x.Delays)
	}
	return n
}

// hasAny reports whether some run of either arm satisfies f.
func hasAny(s, r []RunResult, f func(RunResult) bool) bool {
	for _, x := range append(append([]RunResult{}, s...), r...) {
		if f(x) {
			return true
		}
	}
	return false
}

// runNotes joins the distinct notes of the runs, per arm.
func runNotes(s, r []RunResult) string {
	var parts []string
	for _, arm := range []struct {
		name string
		runs []RunResult
	}{{"sluice", s}, {"ref", r}} {
		seen := map[string]bool{}
		var ns []string
		for _, x := range arm.runs {
			if x.Note != "" && !seen[x.Note] {
				seen[x.Note] = true
				ns = append(ns, x.Note)
			}
		}
		if len(ns) > 0 {
			parts = append(parts, arm.name+": "+strings.Join(ns, "; "))
		}
	}
	return strings.Join(parts, " / ")
}

// teeRows compare sluice with the extra reference of a fan-out, one ffmpeg with a tee muxer.
func teeRows(scenario string, s, tee []RunResult) []Row {
	row := func(metric, unit string, f func([]RunResult) float64) Row {
		return Row{Scenario: scenario, Metric: metric + ", reference: one ffmpeg tee", Unit: unit, Sluice: f(s), Ref: f(tee)}
	}
	rows := []Row{
		row("CPU", "% of a core", medianOf(func(x RunResult) float64 { return x.Usage.CPUPercent() })),
		row("peak RSS", "MiB", medianOf(func(x RunResult) float64 { return float64(x.Usage.PeakRSS) / (1 << 20) })),
		row("frames not received, worst run", "frames", worst(func(x RunResult) float64 { return float64(x.FramesShort) })),
	}
	rows[0].Note = fmt.Sprintf("tee: %d run(s)", len(tee))
	return rows
}

// scrapeRow is the CPU one /metrics scrape cost the server, the median over every scrape of
// sluice's runs, and in its note the share of a core that is at one scrape every scrapeEvery.
func scrapeRow(scenario string, s []RunResult) Row {
	ms := pooled(func(x RunResult) []float64 { return x.ScrapeCPU }, 50)(s)
	return Row{Scenario: scenario, Metric: scrapeMetric, Unit: "ms", Sluice: ms, Ref: math.NaN(),
		Note: fmt.Sprintf("%s%% of a core at one scrape every %v; median of %d scrapes, from each run's set-up to the end of its window",
			num(scrapeShare(ms)), scrapeEvery, len(pooledSamples(s, func(x RunResult) []float64 { return x.ScrapeCPU })))}
}

// scrapeMetric names scrapeRow's metric.
const scrapeMetric = "CPU per /metrics scrape, median"

// scrapeShare is the percent of a core that ms of CPU per scrape is at one scrape every
// scrapeEvery.
func scrapeShare(ms float64) float64 { return 100 * ms / float64(scrapeEvery.Milliseconds()) }

// pooledSamples is f's samples of every run together.
func pooledSamples(runs []RunResult, f func(RunResult) []float64) []float64 {
	var xs []float64
	for _, x := range runs {
		xs = append(xs, f(x)...)
	}
	return xs
}
