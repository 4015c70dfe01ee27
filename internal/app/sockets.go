package app

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/storage"
)

// ownSockets reads the kernel's socket tables for the ports this process listens on now: TCP
// sockets in LISTEN state and unconnected bound UDP sockets, matched to this process through
// the socket inodes of /proc/self/fd.
func ownSockets() (map[storage.PortKey]bool, error) {
	inodes, err := socketInodes()
	if err != nil {
		return nil, err
	}
	out := map[storage.PortKey]bool{}
	for _, t := range []struct {
		file, transport, state string
	}{
		{"/proc/net/tcp", storage.TCP, "0A"}, {"/proc/net/tcp6", storage.TCP, "0A"},
		{"/proc/net/udp", storage.UDP, "07"}, {"/proc/net/udp6", storage.UDP, "07"},
	} {
		if err := scanSocketTable(t.file, t.transport, t.state, inodes, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func socketInodes() (map[string]bool, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("list open files: %w", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return inodes, nil
}

// scanSocketTable reads one /proc/net table: "sl local_address rem_address st ... inode ...",
// addresses as hex IP:port.
func scanSocketTable(file, transport, state string, inodes map[string]bool, out map[storage.PortKey]bool) error {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil // no IPv6, say
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != state || !inodes[fields[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || port == 0 {
			continue
		}
		out[storage.PortKey{Port: int(port), Transport: transport}] = true
	}
	return sc.Err()
}
