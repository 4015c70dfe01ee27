package sysstats

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// TestSpeedTestsAtOnceShareOneRun: speed tests asked for while one runs wait for it and get its
// result: the peer sees one run's probes, not one run's a caller (they would share the link
// they measure). A caller that gives up does not end the run for the others, and the next
// call after it measures anew.
func TestSpeedTestsAtOnceShareOneRun(t *testing.T) {
	t.Parallel()
	var pings atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		pings.Add(1)
		time.Sleep(20 * time.Millisecond)
	})
	mux.HandleFunc("GET /download", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		_, _ = w.Write(make([]byte, n))
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	peer := httptest.NewServer(mux)
	defer peer.Close()
	st := &SpeedTester{URL: peer.URL, Phase: 200 * time.Millisecond, Pings: 5}
	const callers = 4
	results := make(chan SpeedResult, callers)
	var wg sync.WaitGroup
	quitter, quit := context.WithCancel(context.Background())
	defer quit()
	for i := range callers + 1 {
		wg.Go(func() {
			ctx := context.Background()
			if i == callers {
				ctx = quitter // gives up at once
			}
			v, err := st.Run(ctx)
			if i == callers {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the caller that gave up: %v", err)
				}
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			results <- v.(SpeedResult)
		})
		if i == 0 {
			time.Sleep(10 * time.Millisecond) // the first call starts the run
		}
		if i == callers {
			quit()
		}
	}
	wg.Wait()
	close(results)
	var first SpeedResult
	n := 0
	for r := range results {
		if n == 0 {
			first = r
		} else if !r.Timestamp.Equal(first.Timestamp) {
			t.Errorf("results of different runs: %v and %v", first.Timestamp, r.Timestamp)
		}
		n++
	}
	if got := pings.Load(); n != callers || got != 6 {
		t.Fatalf("%d results, the peer saw %d probes; want %d results of one run (6 probes)", n, got, callers)
	}
	if _, err := st.Run(context.Background()); err != nil || pings.Load() != 12 {
		t.Fatalf("the next call: %v, %d probes in all", err, pings.Load())
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
