//go:build linux

package link

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// mmsgWriter sends an outbox with sendmmsg(2) in a raw system call. Each outbox carries its
// own headers (sysBatch), since a mux's read loop and clock flush theirs concurrently; the
// socket is non-blocking, so the call returns at once, and a full send buffer makes the
// runtime wait for the socket to be writable. The runtime's entersyscall is skipped for the
// same reason as in mmsgReader.recv: it only woke the runtime's monitor thread.
//
// Where the kernel offers UDP segmentation offload (UDP_SEGMENT, Linux 4.18), consecutive
// datagrams of an outbox to the same peer and of the same length (the last may be shorter)
// leave as one message the kernel cuts into those datagrams: what a connection sends in one
// round (a relay's receiver gets the publisher's packets a TSBPD step at a time, four or five
// at 3 Mbit/s) passes the UDP and IP layers once instead of once a datagram. The datagrams on
// the wire are the same. A socket on which the kernel refuses a segmented send (EIO: a route
// without checksum offload) falls back to one message a datagram for good.
type mmsgWriter struct {
	rc  syscall.RawConn
	v6  bool        // the socket is AF_INET6 (maybe dual-stack): destinations are sockaddr_in6
	gso atomic.Bool // segmented sends are on
}

// sysBatch is an outbox's sendmmsg headers, built at flush time: one header a message, a
// message being one datagram or a run of them sent segmented.
type sysBatch struct {
	hs    []mmsghdr
	first []int        // the outbox index of each message's first datagram
	iovs  []unix.Iovec // two a datagram (header and payload), a message's run contiguous
	names []unix.RawSockaddrInet6
	cmsgs []byte                // one UDP_SEGMENT control message a message, gsoCmsgSpace bytes each
	fn    func(fd uintptr) bool // send, bound once
	from  int                   // the first message not sent yet
	n     int                   // messages to send
	errno syscall.Errno
}

// Segmentation limits: the kernel takes at most 64 segments a message (UDP_MAX_SEGMENTS) and a
// message is one UDP datagram before it is cut (65507 bytes of payload over IPv4).
const (
	gsoMaxSegments = 64
	gsoMaxBytes    = 65000
)

var gsoCmsgSpace = unix.CmsgSpace(2)

func newBatchWriter(c *net.UDPConn) (batchWriter, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("srt: raw socket: %w", err)
	}
	a, _ := c.LocalAddr().(*net.UDPAddr)
	w := &mmsgWriter{rc: rc, v6: a != nil && a.IP.To4() == nil}
	w.gso.Store(gsoSupported(rc))
	return w, nil
}

// gsoSupported reports whether the kernel knows UDP_SEGMENT on this socket.
func gsoSupported(rc syscall.RawConn) bool {
	ok := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		ok = err == nil
	})
	return ok
}

func (w *mmsgWriter) write(o *outbox) error {
	for i := range o.n {
		if a := o.peers[i].Addr(); !a.Is4() && (!w.v6 || !a.Is6()) {
			return fmt.Errorf("srt: send to %v: no such address on this socket", o.peers[i])
		}
	}
	b := &o.sys
	if len(b.hs) < len(o.bufs) {
		n := len(o.bufs)
		b.hs = make([]mmsghdr, n)
		b.first = make([]int, n)
		b.iovs = make([]unix.Iovec, 2*n)
		b.names = make([]unix.RawSockaddrInet6, n)
		b.cmsgs = make([]byte, n*gsoCmsgSpace)
		b.fn = b.send
	}
	done := 0 // datagrams sent
	for done < o.n {
		gso := w.gso.Load()
		w.build(o, done, gso)
		for b.from < b.n {
			b.errno = 0
			if err := w.rc.Write(b.fn); err != nil {
				return err
			}
			if b.errno == unix.EIO && gso {
				// The route cannot take segmented datagrams: send the rest one by one,
				// from now on.
				w.gso.Store(false)
				break
			}
			if b.errno != 0 {
				return os.NewSyscallError("sendmmsg", b.errno)
			}
		}
		if b.from == b.n {
			return nil
		}
		done = b.first[b.from]
	}
	return nil
}

// build fills the batch headers for the outbox's datagrams from index from on, running
// datagrams together when gso allows it.
func (w *mmsgWriter) build(o *outbox, from int, gso bool) {
	b := &o.sys
	nh, nv := 0, 0
	for i := from; i < o.n; {
		size := dgramLen(&o.msgs[i])
		j := i + 1
		if gso {
			total := size
			for j < o.n && j-i < gsoMaxSegments && o.peers[j] == o.peers[i] {
				l := dgramLen(&o.msgs[j])
				if l > size || total+l > gsoMaxBytes {
					break
				}
				total += l
				j++
				if l < size {
					break // a shorter datagram ends a run
				}
			}
		}
		v0 := nv
		for k := i; k < j; k++ {
			for _, p := range o.msgs[k].Buffers {
				if len(p) == 0 {
					continue
				}
				b.iovs[nv].Base = &p[0]
				b.iovs[nv].SetLen(len(p))
				nv++
			}
		}
		h := &b.hs[nh].hdr
		*h = unix.Msghdr{}
		b.hs[nh].n = 0
		h.Iov = &b.iovs[v0]
		h.SetIovlen(nv - v0)
		h.Name = (*byte)(unsafe.Pointer(&b.names[nh]))
		h.Namelen = putSockaddr(&b.names[nh], o.peers[i], w.v6)
		if j-i > 1 {
			c := b.cmsgs[nh*gsoCmsgSpace : (nh+1)*gsoCmsgSpace]
			putSegmentSize(c, size)
			h.Control = &c[0]
			h.SetControllen(len(c))
		}
		b.first[nh] = i
		nh++
		i = j
	}
	b.from, b.n = 0, nh
}

// dgramLen is the length of the datagram m's buffers make.
func dgramLen(m *ipv4.Message) int {
	n := 0
	for _, p := range m.Buffers {
		n += len(p)
	}
	return n
}

// putSegmentSize writes a UDP_SEGMENT control message giving size into c.
func putSegmentSize(c []byte, size int) {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
	h.Level = unix.IPPROTO_UDP
	h.Type = unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&c[unix.CmsgLen(0)])) = uint16(size)
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
