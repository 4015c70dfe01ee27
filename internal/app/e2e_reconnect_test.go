package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// openFDs counts this process's open files that are not the store's: the SQLite reader pool
// opens a connection (the database and its WAL) when reads overlap, and keeps it, which says
// nothing of a publisher session. What a session could leak (sockets, pipes) is counted.
func openFDs(t *testing.T) int {
	t.Helper()
	n := 0
	for _, target := range fdTargets(t) {
		if !isStoreFile(target) {
			n++
		}
	}
	return n
}

// fdTargets lists what this process's file descriptors point at.
func fdTargets(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(fds))
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil {
			out = append(out, target)
		}
	}
	return out
}

// isStoreFile tells the database's files (sluice.db, -wal, -shm) from everything else.
func isStoreFile(target string) bool {
	return strings.Contains(filepath.Base(target), "sluice.db")
}

// settled waits until count() is at most base+slack, and reports the last value; detail (may be
// nil) adds what the failure should show.
func settled(t *testing.T, what string, base, slack int, count func() int, detail func() string) {
	t.Helper()
	var n int
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n = count(); n <= base+slack {
			t.Logf("%s: %d (baseline %d)", what, n, base)
			return
		}
		if time.Now().After(deadline) {
			more := ""
			if detail != nil {
				more = "; " + detail()
			}
			t.Fatalf("%s: %d, baseline %d (+%d allowed)%s", what, n, base, slack, more)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPublisherReconnects: a publisher that stops and comes back three times gives three
// discontinuities, and the server's goroutines and open files return to their baseline.
func TestPublisherReconnects(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	rs := ts.create("restream", restreamBody("reconnects", listenInput("INPUT_TYPE_RTMP_LISTEN", port, "tcp")))
	waitBound(t, port, "TCP")
	time.Sleep(500 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)

	for i := range 4 {
		pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-t", "3", "-f", "flv", rtmpURL(port, "cam"))...)
		testutil.Eventually(t, 20*time.Second, "media flowing", func() bool { return ts.stat("restream", rs).Bitrate > 0 })
		if err := pub.Wait(60 * time.Second); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		testutil.Eventually(t, 20*time.Second, "input idle", func() bool { return ts.stat("restream", rs).Bitrate == 0 })
	}
	if d := ts.stat("restream", rs).Discontinuities; d != 3 {
		t.Fatalf("discontinuities %d, want 3", d)
	}
	settled(t, "goroutines", baseG, 2, runtime.NumGoroutine, nil)
	settled(t, "open files", baseFD, 1, func() int { return openFDs(t) }, func() string {
		return fmt.Sprintf("open now: %q", fdTargets(t))
	})
}
