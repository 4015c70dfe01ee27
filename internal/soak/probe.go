package soak

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProbeSummary is what ffprobe made of the recorded files.
type ProbeSummary struct {
	Files    int
	Seconds  float64 // total duration
	Failures []string
}

// ParseProbeDuration reads the format duration ffprobe printed with
// -show_entries format=duration -of default=noprint_wrappers=1:nokey=1.
func ParseProbeDuration(out []byte) (float64, error) {
	s := strings.TrimSpace(string(out))
	if s == "" || s == "N/A" {
		return 0, fmt.Errorf("ffprobe reported no duration (%q)", s)
	}
	d, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("ffprobe duration %q: %w", s, err)
	}
	return d, nil
}

// ProbeFiles runs ffprobe on every recorded file (paths relative to dir), workers at a time,
// and requires that it reads each with a positive duration.
func ProbeFiles(ctx context.Context, ffprobe, dir string, files map[string][]RecordedFile, workers int) ProbeSummary {
	type job struct {
		rec  string
		file RecordedFile
	}
	jobs := make(chan job)
	var (
		mu  sync.Mutex
		sum ProbeSummary
		wg  sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Go(func() {
			for j := range jobs {
				d, err := probe(ctx, ffprobe, filepath.Join(dir, filepath.FromSlash(j.file.Path)))
				mu.Lock()
				sum.Files++
				if err == nil && d <= 0 {
					err = fmt.Errorf("duration %g s", d)
				}
				if err != nil {
					sum.Failures = append(sum.Failures, fmt.Sprintf("recording %s file %s (%s): %v", j.rec, j.file.Path, j.file.State, err))
				} else {
					sum.Seconds += d
				}
				mu.Unlock()
			}
		})
	}
	recs := make([]string, 0, len(files))
	for r := range files {
		recs = append(recs, r)
	}
	sort.Strings(recs)
	for _, r := range recs {
		for _, f := range files[r] {
			jobs <- job{r, f}
		}
	}
	close(jobs)
	wg.Wait()
	sort.Strings(sum.Failures)
	return sum
}

// probe returns the duration ffprobe reads in path.
func probe(ctx context.Context, ffprobe, path string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffprobe, "-v", "error", "-show_entries", "format=duration",
		"-of", "default=noprint_wrappers=1:nokey=1", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("ffprobe: %w: %s", err, truncate(bytes.TrimSpace(stderr.Bytes())))
	}
	return ParseProbeDuration(out)
}
