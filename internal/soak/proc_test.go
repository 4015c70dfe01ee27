package soak

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     ProcStat
		bad      bool
	}{
		{name: "plain", in: "1234 (ffmpeg) S 77 1234 1234 0 -1 4194560", want: ProcStat{PID: 1234, State: 'S', PPID: 77}},
		{name: "spaces and parens in comm", in: "42 (a (b) c) Z 7 42 42", want: ProcStat{PID: 42, State: 'Z', PPID: 7}},
		{name: "trailing newline", in: "9 (sh) R 1 9 9\n", want: ProcStat{PID: 9, State: 'R', PPID: 1}},
		{name: "no comm", in: "1234 ffmpeg S 77", bad: true},
		{name: "no ppid", in: "1234 (ffmpeg) S", bad: true},
		{name: "bad ppid", in: "1234 (ffmpeg) S x", bad: true},
		{name: "bad pid", in: "x (ffmpeg) S 1", bad: true},
		{name: "empty", in: "", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tc.in))
			if tc.bad {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tsluice\nVmPeak:\t  900 kB\nVmRSS:\t   35928 kB\nRssAnon:\t 20000 kB\n"
	got, err := ParseVmRSS([]byte(status))
	if err != nil || got != 35928*1024 {
		t.Fatalf("got %d, %v; want %d", got, err, 35928*1024)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if _, err := ParseVmRSS([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestProcOfSelf reads this process's own figures and sees a child come and go.
func TestProcOfSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
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
