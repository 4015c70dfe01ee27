package compat

import (
	"os"
	"os/exec"
	"testing"

	"github.com/sluicemedia/sluice/api"
)

func TestMain(m *testing.M) {
	// Every test server hashes the admin password; the production work factor would make each
	// start take seconds under the race detector.
	api.PasswordIterations = 1000
	code := m.Run()
	if clipDir != "" {
		os.RemoveAll(clipDir)
	}
	os.Exit(code)
}

// tools are the programs the suite runs, and the Debian package of each.
var tools = map[string]string{
	"ffmpeg":             "ffmpeg",
	"ffprobe":            "ffmpeg",
	"mediainfo":          "mediainfo",
	"gst-launch-1.0":     "gstreamer1.0-tools",
	"gst-discoverer-1.0": "gstreamer1.0-plugins-base-apps",
	"gst-play-1.0":       "gstreamer1.0-plugins-base-apps",
	"cvlc":               "vlc-bin",
}

// requireTools fails the test when a tool is missing, saying which package brings it (`make
// test` installs them: the suite never skips).
func requireTools(t *testing.T) {
	t.Helper()
	for bin, pkg := range tools {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed (Debian package %s): install it (make deps)", bin, pkg)
		}
	}
}
