package hostile

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// listeningPorts returns the TCP ports pid listens on and the UDP ports it has bound, read
// from its descriptors (/proc/pid/fd) and the kernel's socket tables (/proc/net/tcp, udp and
// their IPv6 twins): what the process holds, whatever its API says.
func listeningPorts(pid int) (tcp, udp map[int]bool, err error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
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
