// Command sluice-bench is the `make bench` runner: it compares sluice with ffmpeg doing the same
// job on loopback, fed the same pre-encoded stream, and writes the medians to BENCHMARKS.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/bench"
	"github.com/sluicemedia/sluice/internal/tooling"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sluice-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	sluiceBin := flag.String("sluice", "bin/sluice", "sluice binary to measure (make build writes it)")
	baselineBin := flag.String("baseline-bin", "", "the gosrt-based sluice build, the reference of srt-readers-50; empty: the figures recorded with it")
	clipPath := flag.String("clip", "bin/bench/clip.ts", "pre-encoded source clip; made with ffmpeg when missing")
	runs := flag.Int("runs", 3, "runs of each arm of each scenario (medians over these)")
	teeRuns := flag.Int("tee-runs", 1, "runs of the fan-outs' extra reference, one ffmpeg with a tee muxer (0: none)")
	window := flag.Duration("window", 9*time.Second, "measurement window of one run")
	only := flag.String("only", "", "comma-separated scenario names to run (default all; latency is the glass-to-glass comparison)")
	latencyWindow := flag.Duration("latency-window", time.Minute, "how long the latency comparison plays each player with each player library")
	out := flag.String("out", "BENCHMARKS.md", "report file; empty for none")
	micro := flag.String("micro", "", "file with the output of the Go micro-benchmarks, included in the report")
	caveat := flag.String("caveat", "", "a sentence about the conditions of this run, put at the top of the report")
	profile := flag.Bool("profile", true, "profile one more run of sluice in a scenario (-profile-of) and print its top 10")
	profileOf := flag.String("profile-of", "player-srt", "the scenario -profile runs once more with a CPU profile")

	poll := flag.Duration("poll", 20*time.Millisecond, "playlist polling interval (the resolution of the listing delays)")
	verbose := flag.Bool("v", false, "log details of every run")
	flag.Parse()
	log := tooling.Logger(*verbose, slog.LevelInfo)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	bin, err := filepath.Abs(*sluiceBin)
	if err != nil {
		return fmt.Errorf("sluice binary %s: %w", *sluiceBin, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("sluice binary: %w (run make build)", err)
	}
	var baseline string
	if *baselineBin != "" {
		if baseline, err = filepath.Abs(*baselineBin); err != nil {
			return fmt.Errorf("baseline binary %s: %w", *baselineBin, err)
		}
		if _, err := os.Stat(baseline); err != nil {
			return fmt.Errorf("baseline binary: %w", err)
		}
	}
	work, err := os.MkdirTemp("", "sluice-bench-work-")
	if err != nil {
		return fmt.Errorf("scratch folder: %w", err)
	}
	defer os.RemoveAll(work)
	machine := bench.DescribeMachine()
	// The clip lasts the window plus room for set-up, so that a run never reaches its end.
	clip, err := bench.MakeClip(ctx, *clipPath, int(window.Seconds())+20)
	if err != nil {
		return err
	}
	if clip.At[len(clip.At)-1] < *window+5*time.Second {
		return fmt.Errorf("clip %s lasts %v: too short for a %v window; delete it to make a longer one", *clipPath, clip.At[len(clip.At)-1], *window)
	}
	env := &bench.Env{Clip: clip, Sluice: bin, Baseline: baseline, Window: *window, WorkDir: work, Log: log, Poll: *poll}
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	outcome := bench.Run(ctx, env, bench.Options{Runs: *runs, TeeRuns: min(*teeRuns, *runs), Only: names, Profile: *profile, ProfileOf: *profileOf, ProfileTo: filepath.Dir(*clipPath), LatencyWindow: *latencyWindow})

	rep := bench.Report{Machine: machine, When: began, Window: *window, Runs: *runs, TeeRuns: min(*teeRuns, *runs), Outcome: outcome, Caveat: *caveat}
	if *micro != "" {
		b, err := os.ReadFile(*micro)
		if err != nil {
			return fmt.Errorf("micro-benchmarks: %w", err)
		}
		rep.Micro = bench.Benchmarks(string(b))
	}
	rep.Took = time.Since(began)
	fmt.Println(bench.Table(outcome.Rows()))
	for _, e := range outcome.Errors {
		fmt.Println("failed:", e)
	}
	if outcome.Latency != nil {
		fmt.Println(outcome.Latency.Markdown())
	}
	if outcome.Profile != "" {
		fmt.Println(outcome.Profile)
	}
	if lit := bench.BaselineLiteral(outcome, baselineCommit(baseline), machine, began); lit != "" {
		fmt.Println("the gosrt-based build's figures, to record as gosrtReaders in internal/bench/baseline.go:")
		fmt.Println(lit)
	}
	if *out != "" {
		if err := os.WriteFile(*out, []byte(rep.Markdown()), 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return nil
}

// baselineCommit is the commit the baseline build was made from, read from a file COMMIT beside
// it; "unknown" without one.
func baselineCommit(bin string) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "COMMIT"))
	if err != nil || bin == "" {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
