package soak

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestProcOfSelf reads this process's own figures and sees a child come and go.
func TestProcOfSelf(t *testing.T) {
	pid := os.Getpid()
	if n, err := OpenFDs(pid); err != nil || n < 3 {
		t.Fatalf("open fds: %d, %v", n, err)
	}
	if b, err := RSS(pid); err != nil || b < 1<<20 {
		t.Fatalf("rss: %d, %v", b, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kids, err := Children(pid)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(kids, func(c Child) bool { return c.PID == cmd.Process.Pid })
	if i < 0 || kids[i].Cmd != "sleep 30" {
		t.Fatalf("child %d not listed as sleep 30: %+v", cmd.Process.Pid, kids)
	}
	// Killed but not waited for: a zombie, still a child.
	_ = cmd.Process.Kill()
	testutil.Eventually(t, 5*time.Second, "killed child is a zombie", func() bool {
		kids, _ := Children(pid)
		i := slices.IndexFunc(kids, func(c Child) bool { return c.PID == cmd.Process.Pid })
		return i >= 0 && kids[i].State == 'Z'
	})
	_ = cmd.Wait()
	kids, _ = Children(pid)
	if slices.ContainsFunc(kids, func(c Child) bool { return c.PID == cmd.Process.Pid }) {
		t.Fatalf("reaped child still listed: %+v", kids)
	}
}
