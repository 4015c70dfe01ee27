package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sluiceBin is the sluice binary TestMain built for every case.
var sluiceBin string

// TestMain builds ./cmd/sluice once, without the race detector, into a folder it removes at
// the end.
func TestMain(m *testing.M) {
	if base := os.Getenv(probeEnv); base != "" {
		os.Exit(runProbe(base, os.Getenv(probeTokenEnv)))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile: the suite builds the server with the go command, which is not in PATH:", err)
		return 1
	}
	sluiceBin = filepath.Join(dir, "sluice")
	build := exec.Command(gobin, "build", "-o", sluiceBin, "github.com/sluicemedia/sluice/cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: build ./cmd/sluice:", err)
		return 1
	}
	return m.Run()
}
