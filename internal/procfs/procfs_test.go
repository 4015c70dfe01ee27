package procfs

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := "4242 (sluice (x) y) S 17 4242 17 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 100 1000 500 18446744073709551615"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, State: 'S', PPID: 17, CPU: 3250 * time.Millisecond}
	if st != want {
		t.Errorf("ParseStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "12 sluice S 1", "x (a) S 1 2 3 4 5 6 7 8 9 10 11 12", "12 (a) S 1 2", "12 (a) S 1 2 3 4 5 6 7 8 9 10 -1 12"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	st, err := ParseStatus([]byte("Name:\tsluice\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"))
	if err != nil || st != (Status{RSS: 1 << 20, HWM: 2 << 20}) {
		t.Fatalf("ParseStatus = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "VmRSS: 12 kB\n", "VmRSS: x kB\nVmHWM: 1 kB\n", "VmRSS: 12 MB\nVmHWM: 1 kB\n"} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q): no error", bad)
		}
	}
}

// TestReadStats: this process is read; a process that does not exist is left out.
func TestReadStats(t *testing.T) {
	got := ReadStats([]int{1 << 30, os.Getpid()})
	if len(got) != 1 || got[0].PID != os.Getpid() {
		t.Fatalf("ReadStats = %+v, want this process alone", got)
	}
}

func TestParseSchedstat(t *testing.T) {
	if d, err := ParseSchedstat([]byte("123456789 4567 89\n")); err != nil || d != 123456789*time.Nanosecond {
		t.Fatalf("ParseSchedstat = %v, %v", d, err)
	}
	if c, w, err := parseSchedstat([]byte("123456789 4567 89\n")); err != nil || c != 123456789 || w != 4567 {
		t.Fatalf("parseSchedstat = %v, %v, %v", c, w, err)
	}
	for _, bad := range []string{"", "12 3", "x 1 2", "-5 1 2", "1 2 3 4", "1 x 2", "1 -2 3"} {
		if _, err := ParseSchedstat([]byte(bad)); err == nil {
			t.Errorf("ParseSchedstat(%q): no error", bad)
		}
	}
}

// TestOnCPU: spinning until the clock-tick count (Stat.CPU) rose by 60 ms, at least 50 ms on a
// CPU, shows as at least 40 ms more with OnCPU, however loaded the machine; a process that
// does not exist is an error.
func TestOnCPU(t *testing.T) {
	me := os.Getpid()
	before, err := OnCPU(me)
	if err != nil {
		t.Fatal(err)
	}
	ticks := func() time.Duration {
		st, err := ReadStat(me)
		if err != nil {
			t.Fatal(err)
		}
		return st.CPU
	}
	from := ticks()
	for deadline := time.Now().Add(10 * time.Second); ticks()-from < 60*time.Millisecond && time.Now().Before(deadline); {
	}
	after, err := OnCPU(me)
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 40*time.Millisecond {
		t.Errorf("50 ms of spinning counted as %v on a CPU", d)
	}
	if _, err := OnCPU(1 << 30); err == nil {
		t.Error("OnCPU of a process that does not exist: no error")
	}
}

// TestRunDelays: child processes that spin, four times as many as the CPUs plus two, are
// runnable all the time and can run at most NumCPU at once, so together they wait to run far
// longer than they run: RunDelays shows more than 1.5 × NumCPU × the time between two readings
// (the most they could have spent on a CPU, so the on-CPU field read in its place fails). A
// process that does not exist is an error.
func TestRunDelays(t *testing.T) {
	var kids []*exec.Cmd
	for range 4*runtime.NumCPU() + 2 {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		kids = append(kids, c)
	}
	read := func() map[int]time.Duration {
		m := map[int]time.Duration{}
		for _, c := range kids {
			if err := RunDelays(c.Process.Pid, m); err != nil {
				t.Fatal(err)
			}
		}
		if len(m) != len(kids) {
			t.Fatalf("RunDelays read %d threads of %d one-thread processes", len(m), len(kids))
		}
		return m
	}
	before, from := read(), time.Now()
	time.Sleep(300 * time.Millisecond)
	after, elapsed := read(), time.Since(from)
	var waited time.Duration
	for tid, w := range after {
		waited += w - before[tid]
	}
	if least := elapsed * time.Duration(runtime.NumCPU()) * 3 / 2; waited < least {
		t.Errorf("%d spinning processes on %d CPUs waited %v to run over %v, want more than %v", len(kids), runtime.NumCPU(), waited, elapsed, least)
	}
	if err := RunDelays(1<<30, map[int]time.Duration{}); err == nil {
		t.Error("RunDelays of a process that does not exist: no error")
	}
}

func TestSNMPCounter(t *testing.T) {
	raw := []byte("Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors\nUdp: 10 2 7 9 7\n" +
		"UdpLite: InDatagrams RcvbufErrors\nUdpLite: 0 99\n")
	if n, err := SNMPCounter(raw, "Udp", "RcvbufErrors"); n != 7 || err != nil {
		t.Errorf("Udp RcvbufErrors = %d, %v; want 7", n, err)
	}
	if n, err := SNMPCounter(raw, "UdpLite", "RcvbufErrors"); n != 99 || err != nil {
		t.Errorf("UdpLite RcvbufErrors = %d, %v; want 99", n, err)
	}
	for _, bad := range []struct{ raw, proto, name string }{
		{string(raw), "Udp", "Nothing"},
		{string(raw), "Tcp", "RcvbufErrors"},
		{"Udp: RcvbufErrors\nUdp: x\n", "Udp", "RcvbufErrors"},
		{"Udp: InDatagrams RcvbufErrors\nUdp: 1\n", "Udp", "RcvbufErrors"},
	} {
		if _, err := SNMPCounter([]byte(bad.raw), bad.proto, bad.name); err == nil {
			t.Errorf("SNMPCounter(%q, %s, %s): no error", bad.raw, bad.proto, bad.name)
		}
	}
	if _, err := UDPRcvbufErrors(); err != nil {
		t.Errorf("this host's counter: %v", err)
	}
}

// TestSelfAndChildren reads this process and a child it starts, then the child as a zombie.
func TestSelfAndChildren(t *testing.T) {
	me := os.Getpid()
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); { // use some CPU
	}
	if st, err := ReadStat(me); err != nil || st.PID != me || st.CPU <= 0 {
		t.Fatalf("ReadStat(self) = %+v, %v", st, err)
	}
	if st, err := ReadStatus(me); err != nil || st.RSS < 1<<20 || st.HWM < st.RSS {
		t.Fatalf("ReadStatus(self) = %+v, %v", st, err)
	}
	if n, err := OpenFDs(me); err != nil || n < 3 {
		t.Fatalf("OpenFDs(self) = %d, %v", n, err)
	}
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := cmd.Process.Pid
	kids, err := Children(me)
	if err != nil || !slices.ContainsFunc(kids, func(s Stat) bool { return s.PID == child }) {
		t.Fatalf("Children(self) = %+v, %v; want %d", kids, err, child)
	}
	if d, err := Descendants([]int{me}); err != nil || d[0] != me || !slices.Contains(d, child) {
		t.Fatalf("Descendants(self) = %v, %v", d, err)
	}
	if c := Cmdline(child); c != "sleep 0.3" {
		t.Errorf("Cmdline = %q", c)
	}
	time.Sleep(600 * time.Millisecond) // it ended; not waited for, it is a zombie
	kids, _ = Children(me)
	i := slices.IndexFunc(kids, func(s Stat) bool { return s.PID == child })
	if i < 0 || !kids[i].Zombie() {
		t.Errorf("the ended child: %+v, want a zombie", kids)
	}
	if d, _ := Descendants([]int{me}); slices.Contains(d, child) {
		t.Errorf("Descendants lists a zombie: %v", d)
	}
	_ = cmd.Wait()
}

// TestDescendantsTree: roots first, then every live process below them however deep, once
// each; other trees and zombies are left out.
func TestDescendantsTree(t *testing.T) {
	all := []Stat{{PID: 10, PPID: 1}, {PID: 11, PPID: 10}, {PID: 12, PPID: 10}, {PID: 13, PPID: 11},
		{PID: 14, PPID: 11, State: 'Z'}, {PID: 20, PPID: 1}, {PID: 21, PPID: 20}, {PID: 30, PPID: 1}}
	got := descendants([]int{10, 30}, all)
	if got[0] != 10 || got[1] != 30 {
		t.Fatalf("roots not first: %v", got)
	}
	slices.Sort(got)
	if want := []int{10, 11, 12, 13, 30}; !slices.Equal(got, want) {
		t.Fatalf("descendants %v, want %v", got, want)
	}
	if got := descendants([]int{99}, all); !slices.Equal(got, []int{99}) {
		t.Fatalf("a leaf: %v", got)
	}
}
