//go:build linux

package cluster

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestCountChildren: the ffmpeg children of a process are counted from /proc, and only its own,
// or from the list Meter.Children gives.
func TestCountChildren(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	gen := "ffmpeg -nostdin -loglevel error -re -f lavfi -i testsrc2=size=64x64:rate=5 -t 30 -f null -"
	sh := exec.Command("sh", "-c", gen+" & "+gen+" & sleep 30 & wait")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range testutil.Children(sh.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = sh.Process.Kill()
		_ = sh.Wait()
	})
	testutil.Eventually(t, 10*time.Second, "two ffmpeg children counted", func() bool {
		n, err := countChildren(sh.Process.Pid, "ffmpeg")
		return err == nil && n == 2
	})
	if n, err := countChildren(sh.Process.Pid, "sleep"); n != 1 || err != nil {
		t.Errorf("sleep children: %d, %v; want 1", n, err)
	}
	// Listed by Meter.Children rather than read from /proc: the same count.
	m := Meter{Children: func() []int { return testutil.Children(sh.Process.Pid) }}
	if n, err := m.countFFmpeg("ffmpeg"); n != 2 || err != nil {
		t.Errorf("listed ffmpeg children: %d, %v; want 2", n, err)
	}
}

// TestMeter: the capacity reports the CPUs, the ffmpeg limit, the CPU share only when the meter
// counts it, and no children for a server that runs none.
func TestMeter(t *testing.T) {
	t.Parallel()
	m := Meter{FFmpegMax: 7}
	if _, ok := m.sampleCPU(context.Background()); ok {
		t.Error("a CPU sample from a meter that does not count the CPU")
	}
	if capa := m.measure(0.5, 3); capa.CPUs < 1 || capa.CPUBusy != 0 || capa.FFmpegMax != 7 || capa.FFmpeg != 0 {
		t.Errorf("capacity without the CPU: %+v", capa)
	}
	m.CPU = true
	share, ok := m.sampleCPU(context.Background())
	if !ok {
		t.Fatal("no CPU sample")
	}
	if capa := m.measure(share, 0); capa.CPUBusy != share || capa.CPUBusy < 0 || capa.CPUBusy > 1 {
		t.Errorf("capacity with the CPU: %+v (sample %v)", capa, share)
	}
}
