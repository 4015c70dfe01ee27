package bench

import (
	"net"
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

// TestListening: a TCP listener and a bound UDP socket of this test are found on their ports,
// and a port no longer held is not.
func TestListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcpPort := l.Addr().(*net.TCPAddr).Port
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udpPort := pc.LocalAddr().(*net.UDPAddr).Port
	if !listening("tcp", tcpPort) || !listening("udp", udpPort) {
		t.Fatalf("listening: tcp %d %v, udp %d %v; want both found", tcpPort, listening("tcp", tcpPort), udpPort, listening("udp", udpPort))
	}
	l.Close()
	pc.Close()
	if listening("tcp", tcpPort) || listening("udp", udpPort) {
		t.Fatal("closed sockets still found")
	}
}
