package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/api"
)

// childServerEnv makes the test binary run the server itself (Main with the SLUICE_*
// environment), so that a test can kill it with SIGKILL like a crash.
const (
	childServerEnv    = "SLUICE_TEST_CHILD_SERVER"
	childFileLimitEnv = "SLUICE_TEST_FILE_LIMIT" // bytes
	childFDLimitEnv   = "SLUICE_TEST_FD_LIMIT"   // open files (RLIMIT_NOFILE)
	// childHTTPEnv shortens the HTTP servers' timeouts: "idle=3s,body=2s,stall=2s".
	childHTTPEnv = "SLUICE_TEST_HTTP_LIMITS"
)

// setTestHTTPLimits shortens httpDefaults from "name=duration,..." (idle, body, stall).
func setTestHTTPLimits(v string) {
	for kv := range strings.SplitSeq(v, ",") {
		k, d, _ := strings.Cut(kv, "=")
		dur, err := time.ParseDuration(d)
		if err != nil {
			panic(fmt.Sprintf("%s: %q: %v", childHTTPEnv, kv, err))
		}
		switch k {
		case "idle":
			httpDefaults.Idle = dur
		case "body":
			httpDefaults.Body = dur
		case "stall":
			httpDefaults.WriteStall, httpDefaults.ReadStall = dur, dur
		default:
			panic(fmt.Sprintf("%s: unknown limit %q", childHTTPEnv, k))
		}
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(childServerEnv) == "1" {
		// A file size limit makes writes fail past it (EFBIG), as a full disk would.
		if n, err := strconv.ParseUint(os.Getenv(childFileLimitEnv), 10, 64); err == nil {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		// The open-file limit the issue measured with (Go raised the soft limit at start).
		if n, err := strconv.ParseUint(os.Getenv(childFDLimitEnv), 10, 64); err == nil {
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		if v := os.Getenv(childHTTPEnv); v != "" {
			setTestHTTPLimits(v)
		}
		os.Exit(Main([]string{"serve"}, os.Stdin, os.Stdout, os.Stderr))
	}
	// Every test server hashes the admin password; the production work factor would make each
	// start take seconds under the race detector.
	api.PasswordIterations = 1000
	os.Exit(m.Run())
}
