package soak

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Config is what `make soak` passes.
type Config struct {
	// Bin is the sluice binary; FFmpeg and FFprobe the tools' paths.
	Bin, FFmpeg, FFprobe string
	// Cycles is the number of publisher connect/drop cycles (default 1000) and Transcodes the
	// number of transcoding restream cycles (default 100).
	Cycles, Transcodes int
	// Settle is the wait after the teardown before the final sample (default 5 s).
	Settle time.Duration
	Limits Limits
	// Keep keeps the temporary folder (data, recordings, the server's log).
	Keep bool
	// Out receives the report; Log the soak's own debug messages.
	Out io.Writer
	Log *slog.Logger
}

// runner holds one soak run.
type runner struct {
	cfg     Config
	srv     *Server
	client  *Client
	clip    *Clip
	ports   Ports
	verdict Verdict
	// warnings are shown but do not fail the soak: a process that recovered by a restart.
	warnings []string
}

// Run runs the soak and returns its verdict; an error means the soak could not run at all.
func Run(ctx context.Context, cfg Config) (*Verdict, error) {
	opt.Zero[io.Writer](&cfg.Out, os.Stdout)
	opt.Zero(&cfg.Log, slog.New(slog.DiscardHandler))
	opt.Positive(&cfg.Settle, 5*time.Second)
	r := &runner{cfg: cfg}
	tmp, err := os.MkdirTemp("", "sluice-soak-")
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	if cfg.Keep {
		r.printf("data, recordings and the server log kept in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	clipPath := filepath.Join(tmp, "clip.ts")
	if err := MakeClip(ctx, cfg.FFmpeg, clipPath, 2); err != nil {
		return nil, err
	}
	if r.clip, err = LoadClip(clipPath); err != nil {
		return nil, err
	}
	data := filepath.Join(tmp, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	password := hex.EncodeToString(pw)
	if r.srv, err = StartServer(ctx, cfg.Bin, data, password, &r.ports); err != nil {
		return nil, err
	}
	defer func() {
		if r.srv.Alive() {
			r.srv.Kill()
		}
	}()
	if r.client, err = Login(ctx, r.srv.API, password); err != nil {
		return nil, err
	}
	r.printf("sluice pid %d, API %s, pprof %s, log %s\n", r.srv.PID(), r.srv.API, r.srv.Debug, r.srv.LogPath)
	return r.soak(ctx)
}

func (r *runner) printf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Out, format, args...)
}

// soak runs the warm-up round, the baseline, the measured round and the final checks.
func (r *runner) soak(ctx context.Context) (*Verdict, error) {
	start := time.Now()
	// Warm-up: one round of everything with one cycle per lane, so that what is built once
	// (pools, caches, the hardware-encoder probe, SQLite's pages) exists before the baseline.
	r.printf("warm-up round\n")
	warm, err := r.round(ctx, "warm", 0, 1, false)
	if err != nil {
		return nil, err
	}
	r.probe(ctx, warm.files)
	sleep(ctx, r.cfg.Settle)
	base, err := Take(ctx, r.srv.PID(), r.srv.Debug)
	if err != nil {
		return nil, err
	}
	r.printf("baseline: %d goroutines, %d fds, %d children, RSS %s, heap in use %s\n",
		base.Goroutines, base.FDs, len(base.Children), MiB(base.RSS), MiB(base.Mem.HeapInuse))

	r.printf("soak round: %d publisher cycles, %d transcoding restream cycles\n", r.cfg.Cycles, r.cfg.Transcodes)
	main, err := r.round(ctx, "soak", r.cfg.Cycles, r.cfg.Transcodes, true)
	if err != nil {
		return nil, err
	}
	final, err := r.final(ctx, base)
	if err != nil {
		return nil, err
	}
	r.verdict.Checks = Compare(base, main.loaded, final, r.cfg.Limits)
	r.probe(ctx, main.files)
	if err := r.srv.Stop(15 * time.Second); err != nil {
		r.verdict.Fail("server stop: %v", err)
	}
	r.printf("\nresources (baseline after the warm-up round; loaded before the teardown; after = %v after the teardown):\n", r.cfg.Settle)
	if err := r.verdict.WriteTable(r.cfg.Out); err != nil {
		return nil, err
	}
	for _, w := range r.warnings {
		r.printf("warning: %s\n", w)
	}
	r.printf("total time %v\n", time.Since(start).Round(time.Second))
	return &r.verdict, nil
}

// final waits Settle after the teardown, then samples; while a limit is exceeded it samples
// again, up to three more times two seconds apart, so that work still winding down is not
// taken for a leak.
func (r *runner) final(ctx context.Context, base Sample) (Sample, error) {
	sleep(ctx, r.cfg.Settle)
	var s Sample
	var err error
	for try := 0; try < 4; try++ {
		if try > 0 {
			sleep(ctx, 2*time.Second)
		}
		if s, err = Take(ctx, r.srv.PID(), r.srv.Debug); err != nil {
			return s, err
		}
		v := Verdict{Checks: Compare(base, nil, s, r.cfg.Limits)}
		if v.OK() {
			break
		}
	}
	return s, nil
}

// roundResult is what a round leaves for the final checks.
type roundResult struct {
	files  map[string][]RecordedFile
	loaded *Sample
}

// round sets up a fixture, runs the publisher and transcoding cycles concurrently (cycles 0
// means perLane cycles on each lane), checks what the processes saw, and tears down.
func (r *runner) round(ctx context.Context, tag string, cycles, transcodes int, report bool) (roundResult, error) {
	var res roundResult
	t0 := time.Now()
	f, err := Setup(ctx, r.client, &r.ports, tag, r.cfg.FFmpeg)
	if err != nil {
		_, terr := Teardown(ctx, r.client, f)
		return res, errors.Join(err, terr)
	}
	if cycles == 0 {
		cycles = len(f.Lanes)
	}
	r.waitStarted(ctx, f)
	setup := time.Since(t0)
	t0 = time.Now()
	var pubDone, trDone atomic.Int64
	progress := r.progress(ctx, report, cycles, transcodes, &pubDone, &trDone)
	var (
		wg    sync.WaitGroup
		lanes []LaneResult
		tr    TranscodeResult
	)
	wg.Go(func() { lanes = RunCycles(ctx, f.Lanes, r.clip, cycles, &pubDone, r.cfg.Log) })
	wg.Go(func() { tr = RunTranscodes(ctx, r.client, f, r.clip, r.srv.PID(), transcodes, &trDone, r.cfg.Log) })
	wg.Wait()
	progress()
	elapsed := time.Since(t0)
	// Let the last drops reach every process before reading their figures.
	sleep(ctx, udpGap)
	if report {
		if s, err := Take(ctx, r.srv.PID(), r.srv.Debug); err == nil {
			res.loaded = &s
		}
	}
	states, serr := Snapshot(ctx, r.client, f)
	t0 = time.Now()
	files, terr := Teardown(ctx, r.client, f)
	teardown := time.Since(t0)
	res.files = files
	if serr != nil || terr != nil {
		return res, errors.Join(serr, terr)
	}
	// The warm-up round only warms: one short cycle per lane proves little, and its
	// recorded files are probed with the rest.
	if report {
		r.checkRound(f, lanes, tr, states, files, transcodes)
	}
	r.printf("  %s round: set-up %v, cycles %v, teardown %v\n", tag, setup.Round(time.Millisecond), elapsed.Round(time.Millisecond), teardown.Round(time.Millisecond))
	return res, nil
}

// waitStarted waits up to 15 s until the server holds every lane's socket open: listen
// inputs have bound their ports.
func (r *runner) waitStarted(ctx context.Context, f *Fixture) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		open, err := r.client.ListeningPorts(ctx)
		missing := 0
		for _, l := range f.Lanes {
			if !open[PortKey{l.Port, l.Transport}] {
				missing++
			}
		}
		if err == nil && missing == 0 {
			return
		}
		r.cfg.Log.Debug("waiting for the lanes' sockets", "missing", missing, "err", err)
		sleep(ctx, 100*time.Millisecond)
	}
}

// progress prints the counts every 15 s until the returned stop is called.
func (r *runner) progress(ctx context.Context, on bool, cycles, transcodes int, pub, tr *atomic.Int64) (stop func()) {
	if !on {
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
				r.printf("  %4.0fs: publisher cycles %d/%d, transcoding cycles %d/%d\n",
					time.Since(t0).Seconds(), pub.Load(), cycles, tr.Load(), transcodes)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// probe checks every recorded file with ffprobe.
func (r *runner) probe(ctx context.Context, files map[string][]RecordedFile) {
	ps := ProbeFiles(ctx, r.cfg.FFprobe, filepath.Join(r.srv.Data, "recordings"), files, 2)
	r.printf("recorded files: %d probed, %.1f s in all, %d unreadable\n", ps.Files, ps.Seconds, len(ps.Failures))
	for _, f := range ps.Failures {
		r.verdict.Fail("%s", f)
	}
}
