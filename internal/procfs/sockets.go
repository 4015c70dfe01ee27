package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Socket states as the kernel's socket tables write them (hex).
const (
	TCPListen      = "0A" // a TCP socket in LISTEN
	UDPUnconnected = "07" // a bound UDP socket with no peer (TCP_CLOSE, as UDP reuses the states)
)

// Socket is one socket of a /proc/net table: its local port, its state, its inode (which
// /proc/<pid>/fd links name as socket:[inode]), what it holds unread and, in the UDP tables,
// what the kernel dropped for it.
type Socket struct {
	Port    int
	State   string
	Inode   string
	RxQueue int64 // bytes counted against the receive buffer (rx_queue)
	Drops   int64 // datagrams dropped, mostly for a full receive buffer (UDP tables only)
}

// Sockets reads the kernel's sockets of proto ("tcp" or "udp"), IPv4 and IPv6, that have a
// local port. A missing table (no IPv6) is empty.
func Sockets(proto string) ([]Socket, error) {
	var out []Socket
	for _, file := range []string{"/proc/net/" + proto, "/proc/net/" + proto + "6"} {
		f, err := os.Open(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			if s, ok := ParseSocketLine(sc.Text()); ok {
				if strings.HasPrefix(proto, "udp") {
					s.Drops = udpDrops(sc.Text())
				}
				out = append(out, s)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
	}
	return out, nil
}

// ParseSocketLine parses one line of a /proc/net socket table: "sl local_address rem_address
// st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...", addresses as HEXIP:HEXPORT.
// A line without a local port is not a socket.
func ParseSocketLine(line string) (Socket, bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return Socket{}, false
	}
	_, hexPort, ok := strings.Cut(f[1], ":")
	if !ok {
		return Socket{}, false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || port == 0 {
		return Socket{}, false
	}
	s := Socket{Port: int(port), State: f[3], Inode: f[9]}
	if _, rx, ok := strings.Cut(f[4], ":"); ok {
		s.RxQueue, _ = strconv.ParseInt(rx, 16, 64)
	}
	return s, true
}

// udpDrops reads the last field of a UDP table's line, "... inode ref pointer drops"; 0 where
// there is none.
func udpDrops(line string) int64 {
	f := strings.Fields(line)
	if len(f) < 13 {
		return 0
	}
	n, _ := strconv.ParseInt(f[12], 10, 64)
	return n
}

// UDPSocket returns the UDP socket bound to local port port (IPv4 first, then IPv6); false
// when there is none.
func UDPSocket(port int) (Socket, bool, error) {
	socks, err := Sockets("udp")
	if err != nil {
		return Socket{}, false, err
	}
	for _, s := range socks {
		if s.Port == port {
			return s, true, nil
		}
	}
	return Socket{}, false, nil
}

// RmemDefault is the receive buffer a socket gets without SO_RCVBUF, in bytes
// (net.core.rmem_default).
func RmemDefault() (int64, error) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_default")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("net.core.rmem_default %q: not a size", bytes.TrimSpace(b))
	}
	return n, nil
}

// SocketInodes returns the inodes of the sockets process pid has open (from its /proc/<pid>/fd
// links); pid 0 is this process.
func SocketInodes(pid int) (map[string]bool, error) {
	dir := "/proc/self/fd"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/fd"
	}
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list open files: %w", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return inodes, nil
}

// Listeners returns the ports process pid (0: this process) listens on now, by transport:
// TCP sockets in LISTEN and unconnected bound UDP sockets, matched to the process through the
// socket inodes of its fd folder.
func Listeners(pid int) (tcp, udp map[int]bool, err error) {
	inodes, err := SocketInodes(pid)
	if err != nil {
		return nil, nil, err
	}
	tcp, udp = map[int]bool{}, map[int]bool{}
	for _, t := range []struct {
		proto, state string
		out          map[int]bool
	}{{"tcp", TCPListen, tcp}, {"udp", UDPUnconnected, udp}} {
		socks, err := Sockets(t.proto)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range socks {
			if s.State == t.state && inodes[s.Inode] {
				t.out[s.Port] = true
			}
		}
	}
	return tcp, udp, nil
}
