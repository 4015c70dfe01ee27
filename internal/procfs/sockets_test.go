package procfs

import (
	"net"
	"strings"
	"testing"
)

// TestParseSocketLine: the port, state and inode of a table line; the header and lines without
// a port are no socket.
func TestParseSocketLine(t *testing.T) {
	tcp := "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41567 1 0 100 0 0 10 0"
	s, ok := ParseSocketLine(tcp)
	if !ok || s != (Socket{Port: 8080, State: TCPListen, Inode: "41567"}) {
		t.Fatalf("ParseSocketLine = %+v, %v", s, ok)
	}
	udp := " 1062: 0100007F:A7C4 00000000:0000 07 00000000:00034A00 00:00000000 00000000     0        0 98765 2 0000000000000000 37"
	if s, ok := ParseSocketLine(udp); !ok || s != (Socket{Port: 42948, State: UDPUnconnected, Inode: "98765", RxQueue: 0x34A00}) {
		t.Fatalf("ParseSocketLine(udp) = %+v, %v", s, ok)
	}
	if d := udpDrops(udp); d != 37 {
		t.Errorf("udpDrops = %d, want 37", d)
	}
	for _, bad := range []string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		strings.Replace(tcp, "0100007F:1F90", "0100007F:0000", 1),
		strings.Replace(tcp, "0100007F:1F90", "0100007F", 1),
		"   1: 0100007F:1F90 00000000:0000 0A",
	} {
		if s, ok := ParseSocketLine(bad); ok {
			t.Errorf("ParseSocketLine(%q) = %+v, want no socket", bad, s)
		}
	}
}

// TestOwnSockets: a TCP listener and a bound UDP socket of this process are in the tables, in
// their states, with inodes among this process's sockets.
func TestOwnSockets(t *testing.T) {
	l, pc := listenBoth(t)
	inodes, err := SocketInodes(0)
	if err != nil {
		t.Fatal(err)
	}
	find := func(proto string, port int, state string) bool {
		socks, err := Sockets(proto)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range socks {
			if s.Port == port && s.State == state && inodes[s.Inode] {
				return true
			}
		}
		return false
	}
	if !find("tcp", l.Addr().(*net.TCPAddr).Port, TCPListen) {
		t.Error("own TCP listener not found")
	}
	if !find("udp", pc.LocalAddr().(*net.UDPAddr).Port, UDPUnconnected) {
		t.Error("own UDP socket not found")
	}
}

// TestListenersSeesListenersOnly: this process's TCP listener and bound UDP socket are listed;
// a closed listener and a connected client socket are not.
func TestListenersSeesListenersOnly(t *testing.T) {
	l, pc := listenBoth(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	// A connected client socket is not a listener.
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	clientPort := conn.LocalAddr().(*net.TCPAddr).Port

	tcp, udp, err := Listeners(0)
	if err != nil {
		t.Fatal(err)
	}
	if lp, up := l.Addr().(*net.TCPAddr).Port, pc.LocalAddr().(*net.UDPAddr).Port; !tcp[lp] || !udp[up] {
		t.Fatalf("listeners tcp %v udp %v lack TCP %d or UDP %d", tcp, udp, lp, up)
	}
	for _, p := range []int{closedPort, clientPort} {
		if tcp[p] {
			t.Errorf("TCP %d listed, but it is not listening", p)
		}
	}
}

// listenBoth opens a TCP listener and a bound UDP socket on loopback ports from :0; both are
// closed when the test ends.
func listenBoth(t *testing.T) (net.Listener, net.PacketConn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return l, pc
}

// TestUDPSocketQueue: a datagram nobody reads shows in its socket's receive queue; the default
// receive buffer is read.
func TestUDPSocketQueue(t *testing.T) {
	_, pc := listenBoth(t)
	port := pc.LocalAddr().(*net.UDPAddr).Port
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	s, ok, err := UDPSocket(port)
	if err != nil || !ok || s.RxQueue < 1000 || s.Drops != 0 {
		t.Fatalf("UDPSocket(%d) = %+v, %v, %v; want 1000 bytes or more queued, no drops", port, s, ok, err)
	}
	if n, err := RmemDefault(); err != nil || n < 4096 {
		t.Errorf("RmemDefault = %d, %v", n, err)
	}
}
