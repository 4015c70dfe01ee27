//go:build linux

package link

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgWriter sends an outbox with sendmmsg(2) in a raw system call. Each outbox carries its
// own headers (sysBatch), since a mux's read loop and clock flush theirs concurrently; the
// socket is non-blocking, so the call returns at once, and a full send buffer makes the
// runtime wait for the socket to be writable. The runtime's entersyscall is skipped for the
// same reason as in mmsgReader.recv: it only woke the runtime's monitor thread.
type mmsgWriter struct {
	rc syscall.RawConn
	v6 bool // the socket is AF_INET6 (maybe dual-stack): destinations are sockaddr_in6
}

// sysBatch is an outbox's sendmmsg headers, built at flush time.
type sysBatch struct {
	hs    []mmsghdr
	iovs  [][2]unix.Iovec
	names []unix.RawSockaddrInet6
	fn    func(fd uintptr) bool // send, bound once
	from  int                   // the first datagram not sent yet
	n     int                   // datagrams to send
	errno syscall.Errno
}

func newBatchWriter(c *net.UDPConn) (batchWriter, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("srt: raw socket: %w", err)
	}
	a, _ := c.LocalAddr().(*net.UDPAddr)
	return &mmsgWriter{rc: rc, v6: a != nil && a.IP.To4() == nil}, nil
}

func (w *mmsgWriter) write(o *outbox) error {
	b := &o.sys
	if len(b.hs) < len(o.bufs) {
		b.hs = make([]mmsghdr, len(o.bufs))
		b.iovs = make([][2]unix.Iovec, len(o.bufs))
		b.names = make([]unix.RawSockaddrInet6, len(o.bufs))
		b.fn = b.send
	}
	for i := range o.n {
		if a := o.peers[i].Addr(); !a.Is4() && (!w.v6 || !a.Is6()) {
			return fmt.Errorf("srt: send to %v: no such address on this socket", o.peers[i])
		}
	}
	for i := range o.n {
		h := &b.hs[i].hdr
		*h = unix.Msghdr{}
		b.hs[i].n = 0
		nb := 0
		for _, p := range o.msgs[i].Buffers {
			if len(p) == 0 {
				continue
			}
			b.iovs[i][nb].Base = &p[0]
			b.iovs[i][nb].SetLen(len(p))
			nb++
		}
		h.Iov = &b.iovs[i][0]
		h.SetIovlen(nb)
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Namelen = putSockaddr(&b.names[i], o.peers[i], w.v6)
	}
	b.from, b.n = 0, o.n
	for b.from < b.n {
		b.errno = 0
		if err := w.rc.Write(b.fn); err != nil {
			return err
		}
		if b.errno != 0 {
			return os.NewSyscallError("sendmmsg", b.errno)
		}
	}
	return nil
}

// send is the raw connection's write callback: one sendmmsg of what is left; false asks the
// runtime to wait until the socket is writable.
func (b *sysBatch) send(fd uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.hs[b.from])), uintptr(b.n-b.from), 0, 0, 0)
		switch errno {
		case 0:
			b.from += int(n)
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		b.errno = errno
		return true
	}
}

// putSockaddr writes ap into sa as a sockaddr_in, or as a sockaddr_in6 on an AF_INET6 socket
// (IPv4 peers mapped), and returns its length.
func putSockaddr(sa *unix.RawSockaddrInet6, ap netip.AddrPort, v6 bool) uint32 {
	port := ap.Port()
	addr := ap.Addr()
	if !v6 {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*sa4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: addr.As4()}
		pb := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		pb[0], pb[1] = byte(port>>8), byte(port)
		return uint32(unsafe.Sizeof(*sa4))
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: addr.As16()}
	pb := (*[2]byte)(unsafe.Pointer(&sa.Port))
	pb[0], pb[1] = byte(port>>8), byte(port)
	return uint32(unsafe.Sizeof(*sa))
}
