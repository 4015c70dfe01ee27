package recorder

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSafeName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"cam 1":                  "cam_1",
		"../../etc/passwd":       "_.._etc_passwd",
		"..hidden":               "hidden",
		"":                       "recording",
		"...":                    "recording",
		"naïve/é":                "na_ve__",
		strings.Repeat("a", 150): strings.Repeat("a", 100),
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCreateFileNamesAndCollisions: a session's file is <dir>/<name>/<name>_<UTC start>.<ext>;
// a second session in the same millisecond gets -1, and a name cannot leave dir.
func TestCreateFileNamesAndCollisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.FixedZone("X", 3600))
	var rels []string
	for range 2 {
		rel, f, err := createFile(dir, "../up", start, "mp4")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		rels = append(rels, rel)
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	want := []string{"_up/_up_20260102T020405.678Z.mp4", "_up/_up_20260102T020405.678Z-1.mp4"}
	if rels[0] != want[0] || rels[1] != want[1] {
		t.Errorf("files %q, want %q", rels, want)
	}
}

// TestRepairOfAVanishedFile: a file a crash left open that is gone is repaired as empty, with
// an end time.
func TestRepairOfAVanishedFile(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := Repair(t.TempDir(), Entry{Path: "x/x_1.mp4", Format: "mp4", Size: 99, Duration: 3, State: StateRecording}, log)
	if e.State != StateRepaired || e.Size != 0 || e.Duration != 0 || e.Ended == nil {
		t.Errorf("repaired entry %+v", e)
	}
}
