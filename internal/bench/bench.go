package bench

import (
	"context"
	"fmt"
	"time"
)

// Options set a bench run.
type Options struct {
	Runs      int      // runs of each arm of each scenario; medians are over these
	TeeRuns   int      // runs of the extra tee reference of the fan-outs, at most Runs; 0 for none
	Only      []string // scenario names to run; all when empty
	Profile   bool     // one more sluice run of ProfileOf with a CPU profile
	ProfileOf string   // the scenario to profile; player-srt when empty
	ProfileTo string   // folder for the profile file
	// LatencyWindow is how long each playback of the latency comparison lasts; 60 s when zero.
	LatencyWindow time.Duration
}

// Outcome is every run of every scenario, and the profile.
type Outcome struct {
	Scenarios []Scenario
	Runs      map[string]map[Arm][]RunResult // scenario → arm → runs
	Errors    []string
	Profile   string          // go tool pprof -top of sluice in ProfileOf, empty when not taken
	ProfileOf Scenario        // the scenario profiled
	Latency   *LatencyOutcome // the glass-to-glass comparison, nil when not run
}

// Run runs the scenarios, alternating the arms so that a slow spell of the machine hits both.
func Run(ctx context.Context, env *Env, opts Options) *Outcome {
	out := &Outcome{Runs: map[string]map[Arm][]RunResult{}}
	for _, sc := range Scenarios() {
		if len(opts.Only) > 0 && !contains(opts.Only, sc.Name) {
			continue
		}
		out.Scenarios = append(out.Scenarios, sc)
		out.Runs[sc.Name] = map[Arm][]RunResult{}
		for i := range max(opts.Runs, sc.Runs) {
			for _, arm := range arms(sc, i, opts.TeeRuns, env.Baseline != "") {
				if ctx.Err() != nil {
					return out
				}
				t := time.Now()
				res, err := runOnce(ctx, env, sc, arm, nil)
				if err != nil {
					env.Log.Error("run failed", "scenario", sc.Name, "arm", arm, "run", i+1, "err", err)
					out.Errors = append(out.Errors, fmt.Sprintf("%s %s run %d: %v", sc.Name, arm, i+1, err))
					continue
				}
				env.Log.Info("run", "scenario", sc.Name, "arm", arm, "run", i+1, "cpu_pct", fmt.Sprintf("%.1f", res.Usage.CPUPercent()),
					"rss_mib", res.Usage.PeakRSS>>20, "first_playlist_s", res.FirstPlaylist, "frames_short", res.FramesShort, "frames_short_at_end", res.FramesShortEnd, "cc_errors", res.CCErrors,
					"note", res.Note, "took", time.Since(t).Round(100*time.Millisecond))
				out.Runs[sc.Name][arm] = append(out.Runs[sc.Name][arm], res)
			}
		}
	}
	if (len(opts.Only) == 0 || contains(opts.Only, LatencyScenario)) && ctx.Err() == nil {
		w := opts.LatencyWindow
		if w <= 0 {
			w = latencyWindowDefault
		}
		out.Latency = RunLatency(ctx, env, w)
	}
	name := opts.ProfileOf
	if name == "" {
		name = "player-srt"
	}
	if opts.Profile && (len(opts.Only) == 0 || contains(opts.Only, name)) && ctx.Err() == nil {
		out.Profile = profileRun(ctx, env, name, opts.ProfileTo, out)
	}
	return out
}

// profileRun runs scenario name once more on sluice with a CPU profile over most of the window.
func profileRun(ctx context.Context, env *Env, name, dir string, out *Outcome) string {
	var sc Scenario
	for _, s := range Scenarios() {
		if s.Name == name {
			sc = s
		}
	}
	if sc.Name == "" {
		out.Errors = append(out.Errors, fmt.Sprintf("profile of %s: no such scenario", name))
		return ""
	}
	out.ProfileOf = sc
	var top string
	var perr error
	_, err := runOnce(ctx, env, sc, ArmSluice, func(sl *Sluice) {
		top, perr = cpuProfile(ctx, sl, env.Sluice, dir, sc.Name, env.Window-2*time.Second)
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		out.Errors = append(out.Errors, fmt.Sprintf("profile of %s: %v", name, err))
		return ""
	}
	return top
}

// arms lists the arms of run i of sc: sluice and the reference, then the tee reference for the
// first teeRuns runs of a scenario that has one. A scenario whose reference is the gosrt-based
// build runs sluice alone when that build is not given.
func arms(sc Scenario, i, teeRuns int, baseline bool) []Arm {
	if sc.Baseline && !baseline {
		return []Arm{ArmSluice}
	}
	if sc.Tee != "" && i < teeRuns {
		return []Arm{ArmSluice, ArmRef, ArmTee}
	}
	return []Arm{ArmSluice, ArmRef}
}

// contains reports whether names holds name.
func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
