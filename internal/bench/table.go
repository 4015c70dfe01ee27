package bench

import (
	"fmt"
	"math"
	"strings"
)

// Row is one line of the results table: a metric of a scenario for both arms.
type Row struct {
	Scenario string
	Metric   string
	Unit     string
	Sluice   float64 // NaN when not measured
	Ref      float64 // NaN when not measured or when the reference has no counterpart
	Recorded bool    // Ref was recorded in an earlier run (the gosrt-based build), not measured in this one
	Note     string
}

// Ratio is Sluice / Ref, or NaN when either is missing or Ref is zero.
func (r Row) Ratio() float64 {
	if math.IsNaN(r.Sluice) || math.IsNaN(r.Ref) || r.Ref == 0 {
		return math.NaN()
	}
	return r.Sluice / r.Ref
}

// Table renders rows as a Markdown table with the ratio sluice / reference.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| scenario | metric | sluice | reference | sluice / ref | note |\n")
	b.WriteString("|---|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		metric := r.Metric
		if r.Unit != "" {
			metric += " (" + r.Unit + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Scenario, metric,
			num(r.Sluice), num(r.Ref), num(r.Ratio()), r.Note)
	}
	return b.String()
}

// num prints a value with three significant digits, or "n/a".
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
