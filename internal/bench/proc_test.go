package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// Field 14 (utime) = 250 ticks, 15 (stime) = 31 ticks; the command name holds ") (" and spaces.
	line := "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 1203 0 0 0 250 31 0 0 20 0 9 0 123 1000 200 18446744073709551615\n"
	got, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 2810 * time.Millisecond; got != want {
		t.Fatalf("cpu %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 no parenthesis 1 2 3", "1 (x) S 1 2 3", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -5 3 0 0"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tsluice\nVmPeak:\t 2000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\nThreads:\t9\n"
	rss, hwm, err := ParseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if rss != 40960*1024 || hwm != 51200*1024 {
		t.Fatalf("rss %d hwm %d", rss, hwm)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\nVmHWM:\t1 kB\n", "VmRSS:\tx kB\nVmHWM:\t1 kB\n"} {
		if _, _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q): no error", bad)
		}
	}
}

// TestReadProcSelf reads the test's own process: it has used some CPU and holds some memory.
func TestReadProcSelf(t *testing.T) {
	s, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSS <= 0 || s.HWM < s.RSS || s.CPU < 0 {
		t.Fatalf("implausible sample %+v", s)
	}
	if _, err := ReadProc(-1); err == nil || !strings.Contains(err.Error(), "pid -1") {
		t.Fatalf("ReadProc(-1): %v", err)
	}
}

func TestPortListed(t *testing.T) {
	tcp := "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0"
	if !portListed(tcp, "tcp", 8080) || portListed(tcp, "tcp", 8081) {
		t.Fatal("listening TCP socket on 8080 not recognised")
	}
	est := strings.Replace(tcp, " 0A ", " 01 ", 1)
	if portListed(est, "tcp", 8080) {
		t.Fatal("an established TCP socket is not a listener")
	}
	if !portListed(est, "udp", 8080) {
		t.Fatal("a bound UDP socket counts whatever its state")
	}
	if portListed("  sl  local_address rem_address   st", "tcp", 8080) {
		t.Fatal("header line")
	}
}
