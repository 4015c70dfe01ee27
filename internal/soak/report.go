package soak

import "fmt"

// checkRound judges what the measured round's cycles and processes did, and prints the
// details.
func (r *runner) checkRound(f *Fixture, lanes []LaneResult, tr TranscodeResult, states []ProcState,
	files map[string][]RecordedFile, transcodes int) {
	report := true
	cycles := map[string]int{}
	total := 0
	if report {
		r.printf("publisher cycles by lane:\n")
	}
	for _, l := range lanes {
		cycles[l.Lane] = l.Cycles
		total += l.Cycles
		if report {
			r.printf("  %s\n", l)
		}
		if l.Failed > 0 {
			r.verdict.Fail("lane %s: %d publisher cycles failed after %d attempts each (last: %v)", l.Lane, l.Failed, cycleAttempts, l.LastErr)
		}
	}
	if report {
		r.printf("  total %d cycles\n", total)
		r.printf("transcoding restream cycles: %d of %d, a new ffmpeg child seen while running in %d, slowest start-to-running %v\n",
			tr.Cycles, transcodes, tr.FFmpegSeen, tr.Slowest.Round(10e6))
	}
	if tr.Cycles < transcodes {
		r.verdict.Fail("transcoding restreams: %d of %d cycles completed", tr.Cycles, transcodes)
	}
	for _, fail := range tr.Failures {
		r.verdict.Fail("%s", fail)
	}

	if report {
		r.printf("processes before the teardown (sessions = publisher sessions the input saw):\n")
	}
	for _, s := range states {
		sessions := int64(0)
		if s.Stat.BytesIn > 0 {
			sessions = s.Stat.Discontinuities + 1
		}
		line := fmt.Sprintf("  %-26s %-9s %-8s restarts %-3d sessions %4d of %4d cycles, %6.1f MB in",
			s.Lane, s.Module, s.State, s.Restarts, sessions, cycles[s.Lane], float64(s.Stat.BytesIn)/1e6)
		if s.Module == modRecording {
			line += fmt.Sprintf(", %d files", len(files[s.Name]))
		}
		if s.LastError != "" {
			line += fmt.Sprintf(" (last error: %s)", s.LastError)
		}
		if report {
			r.printf("%s\n", line)
		}
		if s.Restarts > 0 {
			r.warnings = append(r.warnings, fmt.Sprintf("%s %s on lane %s restarted %d times (last error: %s)", s.Module, s.Name, s.Lane, s.Restarts, s.LastError))
		}
		switch {
		case s.State == "failed":
			r.verdict.Fail("%s %s on lane %s failed: %s", s.Module, s.Name, s.Lane, s.LastError)
		case s.Stat.BytesIn == 0:
			r.verdict.Fail("%s %s on lane %s received nothing", s.Module, s.Name, s.Lane)
		}
		if s.Module == modRecording && len(files[s.Name]) == 0 {
			r.verdict.Fail("recording %s on lane %s listed no recorded file (state %s, last error %q)", s.Name, s.Lane, s.State, s.LastError)
		}
	}
	for i, rcv := range f.Receivers {
		if report {
			r.printf("receiver %d (%s): %d video frames\n", i, rcv.URL(), rcv.Frames())
		}
		if rcv.Frames() == 0 {
			r.verdict.Fail("receiver %s got no frame from its restream: %s", rcv.URL(), rcv.Stderr())
		}
	}
}
