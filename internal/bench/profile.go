package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// cpuProfile fetches a CPU profile of sl lasting d into dir (named after the scenario) and
// answers the top 10 functions as `go tool pprof -top` prints them.
func cpuProfile(ctx context.Context, sl *Sluice, bin, dir, scenario string, d time.Duration) (string, error) {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", sl.DebugAddr, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("cpu profile %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("cpu profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("cpu profile %s: status %d", url, resp.StatusCode)
	}
	path := filepath.Join(dir, scenario+".cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("cpu profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "", fmt.Errorf("cpu profile %s: %w", url, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("cpu profile: %w", err)
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=10", bin, path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w: %s", path, err, out)
	}
	return string(out), nil
}
