package sysstats

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSpeedTestWithoutTarget: nothing configured is ErrNotAvailable, and says how to set a target.
func TestSpeedTestWithoutTarget(t *testing.T) {
	t.Parallel()
	_, err := (&SpeedTester{}).Run(context.Background())
	if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "SLUICE_SPEEDTEST_URL") {
		t.Fatalf("no target: %v", err)
	}
}

// TestSpeedTestPeerDown: a peer that does not answer is ErrNotAvailable, not a hang.
func TestSpeedTestPeerDown(t *testing.T) {
	t.Parallel()
	_, err := (&SpeedTester{URL: "http://127.0.0.1:1/api/utils/speedtest"}).Run(context.Background())
	if !errors.Is(err, ErrNotAvailable) {
		t.Fatalf("peer down: %v", err)
	}
}

// TestReadIsConsistent: the figures add up (the API test compares them with the kernel's).
func TestReadIsConsistent(t *testing.T) {
	t.Parallel()
	st, err := Read(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUUsage < 0 || st.CPUUsage > 100 || st.RAM.TotalMemMb <= 0 || st.RAM.UsedMemMb+st.RAM.FreeMemMb > st.RAM.TotalMemMb+0.02 {
		t.Errorf("stat %+v", st)
	}
	if st.Drive.TotalGb == "" || st.Drive.TotalGb == "0.00" {
		t.Errorf("drive %+v", st.Drive)
	}
}

// TestCPUShare: the share of the CPUs in use is a fraction from 0 to 1, and a busy loop on
// every core raises it above nothing.
func TestCPUShare(t *testing.T) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for !stop.Load() { // spins on purpose: every core busy
			}
		})
	}
	share, err := CPUShare(context.Background())
	stop.Store(true)
	wg.Wait()
	if err != nil || share <= 0 || share > 1 {
		t.Fatalf("CPUShare while every core spins = %v, %v; want in (0, 1]", share, err)
	}
}
