package storage_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

func modeOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// chmod sets the mode of p.
func chmod(t *testing.T, p string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// TestNewStoreIsPrivate: the folder sluice creates is 0700, the store and its -wal and -shm 0600,
// whatever the umask lets through, and a fresh store has nothing to warn about.
func TestNewStoreIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "sluice.db")
	s := openTarget(t, path)
	if err := s.SetSetting(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, dir); got != 0o700 {
		t.Errorf("data folder %04o, want 0700", got)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if got := modeOf(t, p); got != 0o600 {
			t.Errorf("%s is %04o, want 0600", filepath.Base(p), got)
		}
	}
	if w := s.Warnings(); len(w) != 0 {
		t.Errorf("warnings on a fresh store: %q", w)
	}
}

// TestExposedStoreNarrowedAndWarned: a store left 0644 (and its -wal/-shm, as a second process
// finds them while the first runs) is narrowed to 0600 at Open, with a warning for the file and
// one for a folder open to others.
func TestExposedStoreNarrowedAndWarned(t *testing.T) {
	dir := t.TempDir()
	chmod(t, dir, 0o755)
	path := filepath.Join(dir, "sluice.db")
	first := openTarget(t, path)
	if err := first.SetSetting(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	files := []string{path, path + "-wal", path + "-shm"}
	for _, p := range files {
		chmod(t, p, 0o644)
	}
	second := openTarget(t, path)
	for _, p := range files {
		if got := modeOf(t, p); got != 0o600 {
			t.Errorf("%s is %04o after Open, want 0600", filepath.Base(p), got)
		}
	}
	if got := modeOf(t, dir); got != 0o755 {
		t.Errorf("an existing folder was changed to %04o; only a warning was wanted", got)
	}
	all := strings.Join(second.Warnings(), "\n")
	for _, want := range []string{"data folder " + dir + " is open to other users (mode 0755)",
		"sluice.db was readable by other users (mode 0644)", "sluice.db-wal was readable", "sluice.db-shm was readable"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	// A private folder and store: nothing to say.
	chmod(t, dir, 0o700)
	third := openTarget(t, path)
	if w := third.Warnings(); len(w) != 0 {
		t.Errorf("warnings on a private store: %q", w)
	}
}

func TestStoreInAFileIsRefused(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Open(filepath.Join(notDir, "sluice.db")); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("Open under a file: %v", err)
	}
}
