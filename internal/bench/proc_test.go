package bench

import (
	"os"
	"strings"
	"testing"
)

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
