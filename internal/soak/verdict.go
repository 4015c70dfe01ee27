package soak

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Limits are how far the final sample may exceed the baseline.
type Limits struct {
	// Goroutines and FDs are absolute margins: 10 goroutines and 5 descriptors by default.
	Goroutines, FDs int
	// HeapAbs and HeapFrac bound the heap in use after a forced GC: the baseline plus the
	// larger of HeapAbs bytes and HeapFrac of the baseline.
	HeapAbs  int64
	HeapFrac float64
	// RSSAbs and RSSFrac bound the net RSS (RSS less the freed heap the runtime still holds)
	// the same way.
	RSSAbs  int64
	RSSFrac float64
}

// DefaultLimits are the margins of `make soak`. Goroutines +10 and descriptors +5 are the
// issue's. Memory: after a forced GC the heap in use holds what is live, so a leak of 4 KiB
// per publisher cycle (4 MiB over 1 000) already shows; the 8 MiB / 50 % margin leaves room for
// caches that fill once (SQLite's page cache, pools, the largest ring a reader grew to). RSS
// also counts stacks, runtime metadata and the binary's touched pages, and the runtime returns
// freed heap to the kernel lazily, so the freed-but-retained heap (HeapIdle - HeapReleased) is
// taken out of it and the margin is wider: 32 MiB or 50 %.
var DefaultLimits = Limits{Goroutines: 10, FDs: 5, HeapAbs: 8 << 20, HeapFrac: 0.5, RSSAbs: 32 << 20, RSSFrac: 0.5}

// Check is one row of the before/after table.
type Check struct {
	Name string
	// Before, Loaded and After are the baseline, the figure with everything running (empty when
	// not sampled) and the final figure.
	Before, Loaded, After string
	Limit                 string
	// Info rows are shown but not judged.
	Info bool
	OK   bool
	// Reason says why the row failed.
	Reason string
}

// allowed is base plus the larger of abs and frac of base.
func allowed(base, abs int64, frac float64) int64 {
	return base + max(abs, int64(frac*float64(base)))
}

// Compare judges the final sample against the baseline; loaded, when not nil, is shown beside
// them.
func Compare(before Sample, loaded *Sample, after Sample, lim Limits) []Check {
	var out []Check
	shown := func(f func(Sample) string) string {
		if loaded == nil {
			return ""
		}
		return f(*loaded)
	}
	count := func(name string, b, a, margin int, l string) {
		c := Check{Name: name, Before: fmt.Sprint(b), Loaded: l, After: fmt.Sprint(a), Limit: fmt.Sprintf("<= %d (+%d)", b+margin, margin), OK: a <= b+margin}
		if !c.OK {
			c.Reason = fmt.Sprintf("%s grew by %d, more than %d", name, a-b, margin)
		}
		out = append(out, c)
	}
	count("goroutines", before.Goroutines, after.Goroutines, lim.Goroutines, shown(func(s Sample) string { return fmt.Sprint(s.Goroutines) }))
	count("open fds", before.FDs, after.FDs, lim.FDs, shown(func(s Sample) string { return fmt.Sprint(s.FDs) }))

	kids := Check{Name: "child processes", Before: fmt.Sprint(len(before.Children)), Loaded: shown(func(s Sample) string { return fmt.Sprint(len(s.Children)) }),
		After: fmt.Sprint(len(after.Children)), Limit: "0", OK: len(after.Children) == 0}
	if !kids.OK {
		var names []string
		for _, c := range after.Children {
			names = append(names, fmt.Sprintf("%d (%c) %s", c.PID, c.State, c.Cmd))
		}
		kids.Reason = "children left: " + strings.Join(names, "; ")
	}
	out = append(out, kids)

	bytesRow := func(name string, b, a, abs int64, frac float64, l string) {
		lim := allowed(b, abs, frac)
		c := Check{Name: name, Before: MiB(b), Loaded: l, After: MiB(a), Limit: "<= " + MiB(lim), OK: a <= lim}
		if !c.OK {
			c.Reason = fmt.Sprintf("%s grew from %s to %s, above %s", name, MiB(b), MiB(a), MiB(lim))
		}
		out = append(out, c)
	}
	bytesRow("heap in use", before.Mem.HeapInuse, after.Mem.HeapInuse, lim.HeapAbs, lim.HeapFrac, shown(func(s Sample) string { return MiB(s.Mem.HeapInuse) }))
	bytesRow("net RSS", before.NetRSS(), after.NetRSS(), lim.RSSAbs, lim.RSSFrac, shown(func(s Sample) string { return MiB(s.NetRSS()) }))
	out = append(out,
		Check{Name: "RSS", Before: MiB(before.RSS), Loaded: shown(func(s Sample) string { return MiB(s.RSS) }), After: MiB(after.RSS), Limit: "info", Info: true, OK: true},
		Check{Name: "freed heap held", Before: MiB(before.Mem.Retained()), Loaded: shown(func(s Sample) string { return MiB(s.Mem.Retained()) }),
			After: MiB(after.Mem.Retained()), Limit: "info", Info: true, OK: true},
	)
	return out
}

// MiB formats bytes as mebibytes with one decimal.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Verdict is the outcome of a soak: the resource table and every other failure found.
type Verdict struct {
	Checks   []Check
	Failures []string
}

// Fail records a failure.
func (v *Verdict) Fail(format string, args ...any) {
	v.Failures = append(v.Failures, fmt.Sprintf(format, args...))
}

// OK tells whether every judged row passed and nothing else failed.
func (v *Verdict) OK() bool {
	for _, c := range v.Checks {
		if !c.OK {
			return false
		}
	}
	return len(v.Failures) == 0
}

// Reasons lists why the soak failed: failed rows, then other failures.
func (v *Verdict) Reasons() []string {
	var out []string
	for _, c := range v.Checks {
		if !c.OK {
			out = append(out, c.Reason)
		}
	}
	return append(out, v.Failures...)
}

// WriteTable prints the before/after table.
func (v *Verdict) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tbaseline\tloaded\tafter\tlimit\tresult")
	for _, c := range v.Checks {
		res := "ok"
		switch {
		case c.Info:
			res = "-"
		case !c.OK:
			res = "FAIL"
		}
		loaded := c.Loaded
		if loaded == "" {
			loaded = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Before, loaded, c.After, c.Limit, res)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
