package app

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/sluicemedia/sluice/api"
)

// childServerEnv makes the test binary run the server itself (Main with the SLUICE_*
// environment), so that a test can kill it with SIGKILL like a crash.
const (
	childServerEnv    = "SLUICE_TEST_CHILD_SERVER"
	childFileLimitEnv = "SLUICE_TEST_FILE_LIMIT" // bytes
)

func TestMain(m *testing.M) {
	if os.Getenv(childServerEnv) == "1" {
		// A file size limit makes writes fail past it (EFBIG), as a full disk would.
		if n, err := strconv.ParseUint(os.Getenv(childFileLimitEnv), 10, 64); err == nil {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		os.Exit(Main([]string{"serve"}, os.Stdin, os.Stdout, os.Stderr))
	}
	// Every test server hashes the admin password; the production work factor would make each
	// start take seconds under the race detector.
	api.PasswordIterations = 1000
	os.Exit(m.Run())
}
