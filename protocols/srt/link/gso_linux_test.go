//go:build linux

package link

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
)

// gsoDgram is one datagram of the segmentation test: its peer and its bytes.
type gsoDgram struct {
	to   int // index of the receiving socket
	data []byte
}

// TestSegmentedSends sends an outbox whose datagrams make runs of every kind (same peer and
// length, a shorter one ending a run, a control packet between data packets, another peer, a
// run over the kernel's 64 segments and one over 64 KB) and checks that each receiver gets
// exactly its datagrams, whole and in order, with segmentation on (where the kernel has it)
// and off; with it on, the runs must have left as fewer messages than datagrams.
func TestSegmentedSends(t *testing.T) {
	for _, gso := range []bool{true, false} {
		name := map[bool]string{true: "segmented", false: "one-by-one"}[gso]
		t.Run(name, func(t *testing.T) {
			tr := loopbackTransport(t)
			defer tr.close()
			w := tr.wr.(*mmsgWriter)
			if gso && !w.gso.Load() {
				t.Fatal("the kernel refused UDP_SEGMENT on a loopback socket (Linux >= 4.18 has it)")
			}
			w.gso.Store(gso)

			var rcv [2]*net.UDPConn
			var addrs [2]netip.AddrPort
			for i := range rcv {
				rcv[i] = loopbackUDP(t)
				_ = rcv[i].SetReadBuffer(8 << 20)
				addrs[i] = rcv[i].LocalAddr().(*net.UDPAddr).AddrPort()
			}

			var plan []gsoDgram
			seq := uint32(0)
			data := func(to, size int) {
				b := make([]byte, 16+size)
				binary.BigEndian.PutUint32(b, seq)
				for i := 16; i < len(b); i++ {
					b[i] = byte(seq + uint32(i))
				}
				seq++
				plan = append(plan, gsoDgram{to, b})
			}
			for range 5 {
				data(0, 1316)
			}
			data(0, 700) // ends the run
			data(0, 1316)
			plan = append(plan, gsoDgram{0, []byte{0x80, 0x06, 0, 0, 1, 2, 3, 4}}) // a control packet
			data(0, 1316)
			for range 3 {
				data(1, 1316)
			}
			for range 70 { // over 64 segments
				data(0, 188)
			}
			for range 60 { // over 64 KB
				data(1, 1456)
			}

			o := newOutbox(len(plan))
			for _, d := range plan {
				ap := addrs[d.to]
				if len(d.data) < 16 {
					b := append(o.buf(), d.data...)
					o.commit(b, net.UDPAddrFromAddrPort(ap), ap)
					continue
				}
				hdr := append(o.buf(), d.data[:16]...)
				pl := newPayload(d.data[16:])
				o.commitData(hdr, pl, net.UDPAddrFromAddrPort(ap), ap)
				pl.Release()
			}
			if err := o.flush(tr); err != nil {
				t.Fatal(err)
			}
			msgs := o.sys.n
			if gso && msgs >= len(plan) {
				t.Errorf("%d datagrams left as %d messages: no run was segmented", len(plan), msgs)
			}
			if !gso && msgs != len(plan) {
				t.Errorf("%d datagrams left as %d messages without segmentation", len(plan), msgs)
			}
			t.Logf("%d datagrams in %d messages", len(plan), msgs)

			buf := make([]byte, 65536)
			for to := range rcv {
				_ = rcv[to].SetReadDeadline(time.Now().Add(5 * time.Second))
				for i, d := range plan {
					if d.to != to {
						continue
					}
					n, err := rcv[to].Read(buf)
					if err != nil {
						t.Fatalf("receiver %d, datagram %d of the plan: %v", to, i, err)
					}
					if !bytes.Equal(buf[:n], d.data) {
						t.Fatalf("receiver %d, datagram %d of the plan: got %d bytes %x…, want %d bytes %x…", to, i, n, buf[:min(n, 8)], len(d.data), d.data[:8])
					}
				}
				_ = rcv[to].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if n, err := rcv[to].Read(buf); err == nil {
					t.Fatalf("receiver %d got an extra datagram of %d bytes", to, n)
				}
			}
		})
	}
}
