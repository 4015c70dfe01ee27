package bench

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestLatencyClassicPlayer: the stamp publisher feeds a real sluice's classic player over SRT,
// hls.js in headless Chromium plays it, and the page reads a plausible glass-to-glass latency off
// the displayed frames: between 0 and 30 s, and nearly every read decodes. (Stalls are logged, not
// judged: this checks the measurement, the bench reports what it measures.)
func TestLatencyClassicPlayer(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "sluice")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/sluice").CombinedOutput(); err != nil {
		t.Fatalf("build sluice: %v: %s", err, out)
	}
	env := &Env{Sluice: bin, WorkDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	arm := LatencyArms()[0]
	arm.Kinds = []string{"hls"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	res, usage, err := runLatencyArm(ctx, env, arm, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	t.Logf("%s %s (%s): p50 %v p95 %v over %d reads, %d undecoded, %d stalls, played %.1f s; sluice %.1f %% CPU; took %v",
		r.Arm, r.Kind, r.Player, r.Quantile(0.5), r.Quantile(0.95), len(r.Latencies), r.Undecoded, r.Stalls, r.Played,
		usage.CPUPercent(), time.Since(t0).Round(time.Second))
	if r.Err != "" {
		t.Fatalf("playback: %s", r.Err)
	}
	// About 10 reads a second over 15 s; a busy machine may skip some.
	if len(r.Latencies) < 50 {
		t.Errorf("%d stamps read in 15 s, want at least 50", len(r.Latencies))
	}
	if r.Undecoded > len(r.Latencies)/10 {
		t.Errorf("%d reads without a valid stamp against %d with, want under 10 %%", r.Undecoded, len(r.Latencies))
	}
	for _, l := range r.Latencies {
		if l <= 0 || l > 30*time.Second {
			t.Fatalf("latency %v out of (0, 30 s]", l)
		}
	}
	if usage.CPU <= 0 {
		t.Errorf("sluice's CPU over the playback: %v", usage.CPU)
	}
}
