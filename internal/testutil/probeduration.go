package testutil

import (
	"strconv"
	"testing"
)

// ProbeDuration returns the duration, in seconds, that ffprobe gives the file at path (its
// format's duration); the test fails when ffprobe gives none.
func ProbeDuration(t testing.TB, path string) float64 {
	t.Helper()
	p := FFprobe(t, path, false)
	d, err := strconv.ParseFloat(p.Format.Duration, 64)
	if err != nil {
		t.Fatalf("ffprobe %s: duration %q: %v", path, p.Format.Duration, err)
	}
	return d
}
