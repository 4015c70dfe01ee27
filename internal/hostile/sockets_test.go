package hostile

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// listeningPorts returns the TCP ports pid listens on and the UDP ports it has bound, read
// from its descriptors (/proc/pid/fd) and the kernel's socket tables (/proc/net/tcp, udp and
// their IPv6 twins): what the process holds, whatever its API says.
func listeningPorts(pid int) (tcp, udp map[int]bool, err error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, nil, err
	}
	tcp, udp = map[int]bool{}, map[int]bool{}
	for _, table := range []struct {
		file  string
		ports map[int]bool
		state string // the socket state that counts: 0A is LISTEN; 07 is an unconnected UDP socket
	}{{"tcp", tcp, "0A"}, {"tcp6", tcp, "0A"}, {"udp", udp, "07"}, {"udp6", udp, "07"}} {
		raw, err := os.ReadFile("/proc/net/" + table.file)
		if err != nil {
			continue // no IPv6
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != table.state || !inodes[f[9]] {
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil {
				table.ports[int(p)] = true
			}
		}
	}
	return tcp, udp, nil
}

// connsFrom counts the established TCP connections pid holds on its local port with a peer at
// ip (IPv4). The port keeps out connections of the server's own to other programs that happen to
// use the same loopback address (Debian names the host 127.0.1.1).
func connsFrom(pid int, ip net.IP, port int) (int, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return 0, err
	}
	v4 := ip.To4()
	if v4 == nil {
		return 0, fmt.Errorf("connsFrom: %s is not IPv4", ip)
	}
	// /proc/net/tcp shows an IPv4 address as the hex of its 32 bits in host (little-endian)
	// order, then ':' and the port.
	want := fmt.Sprintf("%02X%02X%02X%02X:", v4[3], v4[2], v4[1], v4[0])
	local := fmt.Sprintf(":%04X", port)
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 10 && f[3] == "01" && strings.HasPrefix(f[2], want) && strings.HasSuffix(f[1], local) && inodes[f[9]] {
			n++
		}
	}
	return n, nil
}

// socketInodes returns the inodes of pid's sockets.
func socketInodes(pid int) (map[string]bool, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return inodes, nil
}
