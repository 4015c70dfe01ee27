//go:build linux

package link

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgReader reads with recvmmsg(2) into the packets' own buffers and decodes the sender's
// address itself. golang.org/x/net's ReadBatch allocates a net.UDPAddr per datagram; this does
// not allocate at all.
//
// It also tracks whether datagrams may wait unhandled (lagging): reads counts the recvmmsg
// calls, and idle is set when the last one found the socket empty, so that the loop waits for
// data with everything it read before handled.
type mmsgReader struct {
	rc     syscall.RawConn
	hs     []mmsghdr
	iovs   []unix.Iovec
	names  []unix.RawSockaddrInet6
	want   int
	n      int
	errno  syscall.Errno
	fn     func(fd uintptr) bool
	reads  atomic.Uint64
	idle   atomic.Bool
	onIdle func()
	inqMu  sync.Mutex       // one lagging query at a time
	inq    func(fd uintptr) // lagging's SIOCINQ, into inqN
	inqN   int
}

// mmsghdr is struct mmsghdr of recvmmsg(2): a msghdr and the length received.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

func newBatchReader(c *net.UDPConn) (batchReader, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("srt: raw socket: %w", err)
	}
	r := &mmsgReader{
		rc:    rc,
		hs:    make([]mmsghdr, readBatchSize),
		iovs:  make([]unix.Iovec, readBatchSize),
		names: make([]unix.RawSockaddrInet6, readBatchSize),
	}
	r.fn = r.recv
	r.inq = func(fd uintptr) {
		n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
		if err != nil {
			n = 0
		}
		r.inqN = n
	}
	return r, nil
}

func (r *mmsgReader) setIdleHook(fn func()) { r.onIdle = fn }

func (r *mmsgReader) recv(fd uintptr) bool {
	// Not idle from before the call on: what it takes off the socket is not handled yet.
	r.idle.Store(false)
	r.reads.Add(1)
	// A raw system call: the socket is non-blocking, so recvmmsg returns at once, and the
	// runtime's entersyscall would only cost a wake-up of its monitor thread (sysmon sleeps
	// while the server idles, and every datagram found it asleep: 9 % of an SRT player's CPU).
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hs[0])), uintptr(r.want), 0, 0, 0)
	if errno == unix.EAGAIN || errno == unix.EINTR {
		if errno == unix.EAGAIN {
			r.idle.Store(true)
			if r.onIdle != nil {
				r.onIdle()
			}
		}
		return false
	}
	r.n, r.errno = int(n), errno
	return true
}

// lagging reports whether datagrams may wait unhandled: the loop is not idle, or the socket
// has received data since (SIOCINQ, the size of the next datagram, is not 0), or a read began
// while it looked. A socket it cannot query counts as caught up, so that nothing waits on it.
func (r *mmsgReader) lagging() bool {
	reads := r.reads.Load()
	if !r.idle.Load() {
		return true
	}
	r.inqMu.Lock()
	r.inqN = 0
	err := r.rc.Control(r.inq)
	queued := r.inqN != 0
	r.inqMu.Unlock()
	if err != nil {
		return false
	}
	return queued || r.reads.Load() != reads
}

func (r *mmsgReader) read(ps []*packet) (int, error) {
	want := min(len(ps), len(r.hs))
	for i := 0; i < want; i++ {
		p := ps[i]
		r.iovs[i].Base = &p.buf[0]
		r.iovs[i].SetLen(len(p.buf))
		h := &r.hs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Namelen = uint32(unsafe.Sizeof(r.names[i]))
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
		h.Control = nil
		h.SetControllen(0)
		h.Flags = 0
		r.hs[i].n = 0
	}
	r.want = want
	if err := r.rc.Read(r.fn); err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", r.errno)
	}
	for i := 0; i < r.n; i++ {
		p := ps[i]
		p.n = int(r.hs[i].n)
		if r.hs[i].hdr.Flags&unix.MSG_TRUNC != 0 {
			p.n = 0 // larger than any SRT datagram
		}
		p.from = sockaddrAddrPort(&r.names[i])
	}
	return r.n, nil
}

// sockaddrAddrPort decodes a sockaddr_in or sockaddr_in6; an IPv4-mapped IPv6 address comes
// back as IPv4, so a peer is the same on a dual-stack socket.
func sockaddrAddrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), netPort(&sa4.Port))
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), netPort(&sa.Port))
	}
	return netip.AddrPort{}
}

// netPort reads a port stored in network byte order.
func netPort(p *uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(p))
	return uint16(b[0])<<8 | uint16(b[1])
}
