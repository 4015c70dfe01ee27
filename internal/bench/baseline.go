package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// recordedBaseline is a scenario measured once with the gosrt-based build, kept so that the
// report shows the before-figure when that build is not at hand (the issue asks it be kept).
type recordedBaseline struct {
	Date    string             // when it was measured, YYYY-MM-DD
	Commit  string             // the commit the gosrt-based build was made from
	Machine string             // the machine and its load average then
	Figures map[string]float64 // row metric → the reference's value
}

// Label says, in the report, that the reference's figures are recorded ones.
func (b recordedBaseline) Label() string {
	return fmt.Sprintf("reference RECORDED on %s with the gosrt-based build (commit %.12s; %s), not measured in this run: its CPU compares only on the same machine.",
		b.Date, b.Commit, b.Machine)
}

// gosrtReaders is srt-readers-50 on the gosrt-based build (the last commit before the switch
// to protocols/srt/link), medians of 3 runs of `sluice-bench -baseline-bin` (which prints this
// literal: replace it after a run on a quiet machine).
var gosrtReaders = recordedBaseline{Date: "2026-11-25", Commit: "b7074665e33d61e8929456a3b8f518f5a0a3ce5a",
	Machine: "AMD EPYC, 2 cores, load average 1.07 1.53 2.80", Figures: map[string]float64{
		"CPU":                            57.17,
		"RSS per reader":                 2.41,
		"continuity errors, worst run":   0,
		"frames not received, worst run": 200,
		"peak RSS":                       142.2,
		"peak RSS, publisher alone":      27.54,
	}}

// BaselineLiteral is the Go literal to put in gosrtReaders after a run that measured the
// gosrt-based build (made from commit), empty when it did not run.
func BaselineLiteral(o *Outcome, commit string, m Machine, when time.Time) string {
	const name = "srt-readers-50"
	if len(o.Runs[name][ArmRef]) == 0 {
		return ""
	}
	machine := fmt.Sprintf("%s, %d cores, load average %s", m.CPU, m.Cores, m.Load)
	return recordLiteral(o.Rows(), name, when.UTC().Format("2006-01-02"), commit, machine)
}

// recordLiteral renders the reference's figures of a scenario as the Go literal of a
// recordedBaseline, for baseline.go.
func recordLiteral(rows []Row, scenario, date, commit, machine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "recordedBaseline{Date: %q, Commit: %q, Machine: %q, Figures: map[string]float64{\n", date, commit, machine)
	var lines []string
	for _, r := range rows {
		if r.Scenario == scenario && !math.IsNaN(r.Ref) {
			lines = append(lines, fmt.Sprintf("\t%q: %.4g,\n", r.Metric, r.Ref))
		}
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, ""))
	b.WriteString("}}")
	return b.String()
}
