//go:build linux

package app

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestCountChildren: the ffmpeg children of a process are counted from /proc, and only its own.
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
}

// TestClusterCapacity: the capacity reports the CPUs, the ffmpeg limit, the CPU share only when
// --cluster-cpu counts it, and no children for a server that runs none.
func TestClusterCapacity(t *testing.T) {
	t.Parallel()
	c := &clusterNode{cfg: Config{ClusterConfig: ClusterConfig{ClusterCPU: false, ClusterFFmpegMax: 7}}}
	c.sampleCPU(context.Background())
	if capa := c.capacity(); capa.CPUs < 1 || capa.CPUBusy != 0 || capa.FFmpegMax != 7 || capa.FFmpeg < 0 {
		t.Errorf("capacity without the CPU: %+v", capa)
	}
	c.cfg.ClusterCPU = true
	c.sampleCPU(context.Background())
	if capa := c.capacity(); capa.CPUBusy < 0 || capa.CPUBusy > 1 {
		t.Errorf("capacity with the CPU: %+v", capa)
	}
}
