package app

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// settled waits until count() is at most base+slack, and reports the last value.
func settled(t *testing.T, what string, base, slack int, count func() int) {
	t.Helper()
	var n int
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n = count(); n <= base+slack {
			t.Logf("%s: %d (baseline %d)", what, n, base)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, baseline %d (+%d allowed)", what, n, base, slack)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPublisherReconnects: a publisher that stops and comes back three times gives three
// discontinuities, and the server's goroutines and open files return to their baseline.
func TestPublisherReconnects(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	port := testutil.FreePort(t)
	rs := ts.create("restream", restreamBody("reconnects", listenInput("INPUT_TYPE_RTMP_LISTEN", port, "tcp")))
	testutil.Eventually(t, 15*time.Second, "listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(port, "TCP"))
	})
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
	settled(t, "goroutines", baseG, 2, runtime.NumGoroutine)
	settled(t, "open files", baseFD, 1, func() int { return openFDs(t) })
}
