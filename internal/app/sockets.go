package app

import (
	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/storage"
)

// ownSockets reads the kernel's socket tables for the ports this process listens on now: TCP
// sockets in LISTEN state and unconnected bound UDP sockets, matched to this process through
// the socket inodes of /proc/self/fd.
func ownSockets() (map[storage.PortKey]bool, error) {
	inodes, err := procfs.SocketInodes(0)
	if err != nil {
		return nil, err
	}
	out := map[storage.PortKey]bool{}
	for _, t := range []struct{ proto, transport, state string }{
		{"tcp", storage.TCP, procfs.TCPListen}, {"udp", storage.UDP, procfs.UDPUnconnected},
	} {
		socks, err := procfs.Sockets(t.proto)
		if err != nil {
			return nil, err
		}
		for _, s := range socks {
			if s.State == t.state && inodes[s.Inode] {
				out[storage.PortKey{Port: s.Port, Transport: t.transport}] = true
			}
		}
	}
	return out, nil
}
