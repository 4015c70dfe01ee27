package testutil

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Clips made by ffmpeg once per test binary, in one temporary folder.
var clips struct {
	mu   sync.Mutex
	dir  string
	made map[string]string // name → path
}

// Clip returns the path of a media file that ffmpeg makes once per test binary with args (its
// inputs and encoding, and -f unless the name's extension says the format) into a file named
// name; a later call with the same name returns the same file without looking at args. Clips
// are made one at a time, within 3 minutes each. They live in one temporary folder that
// RemoveClips deletes (call it, or RunRemovingClips, from TestMain); without that the folder
// stays.
func Clip(t testing.TB, name string, args ...string) string {
	t.Helper()
	RequireFFmpeg(t)
	clips.mu.Lock()
	defer clips.mu.Unlock()
	if p, ok := clips.made[name]; ok {
		return p
	}
	if clips.dir == "" {
		d, err := os.MkdirTemp("", "sluice-clips-")
		if err != nil {
			t.Fatal(err)
		}
		clips.dir, clips.made = d, map[string]string{}
	}
	p := filepath.Join(clips.dir, name)
	if err := FFmpeg(t, append(args, p)...).Wait(3 * time.Minute); err != nil {
		t.Fatalf("make clip %s: %v", name, err)
	}
	clips.made[name] = p
	return p
}

// RemoveClips deletes the clips Clip made.
func RemoveClips() {
	clips.mu.Lock()
	defer clips.mu.Unlock()
	if clips.dir != "" {
		_ = os.RemoveAll(clips.dir)
		clips.dir, clips.made = "", nil
	}
}

// RunRemovingClips is the TestMain of a package whose tests make clips: it runs them, deletes
// the clips and exits with their code.
func RunRemovingClips(m *testing.M) {
	code := m.Run()
	RemoveClips()
	os.Exit(code)
}
