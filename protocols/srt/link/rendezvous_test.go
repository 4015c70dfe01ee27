package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// rdvPair makes a rendezvous between two sluice sockets on loopback ports, with cfgA and cfgB
// and our cookies (0: random); it returns both sides' results.
func rdvPair(t testing.TB, cfgA, cfgB Config, cookieA, cookieB uint32) (a, b *Conn, errA, errB error) {
	t.Helper()
	pa, pb := udpPort(t), udpPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a, errA = rendezvousCookie(ctx, loopback(pa), loopback(pb), cfgA, cookieA)
	}()
	go func() {
		defer wg.Done()
		b, errB = rendezvousCookie(ctx, loopback(pb), loopback(pa), cfgB, cookieB)
	}()
	wg.Wait()
	for _, c := range []*Conn{a, b} {
		if c != nil {
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	return a, b, errA, errB
}

// exchange writes n numbered messages each way and checks that each side reads them all, in
// order.
func exchange(t testing.TB, a, b *Conn, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, d := range []struct {
		name     string
		from, to *Conn
	}{{"a to b", a, b}, {"b to a", b, a}} {
		wg.Add(2)
		want := make([][]byte, n)
		for i := range want {
			want[i] = bytes.Repeat([]byte(fmt.Sprintf("%s %06d|", d.name, i)), 1+i%80)
		}
		go func() {
			defer wg.Done()
			for _, m := range want {
				if _, err := d.from.Write(m); err != nil {
					t.Errorf("%s: write: %v", d.name, err)
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := readAll(ctx, d.to, len(bytes.Join(want, nil)))
			if err != nil {
				t.Errorf("%s: after %d of %d messages: %v", d.name, len(got), n, err)
				return
			}
			if len(got) != n {
				t.Errorf("%s: %d messages, want %d", d.name, len(got), n)
				return
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s: message %d differs", d.name, i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRendezvousLoopback: two sluice sockets meet, without and with a passphrase, with a stream
// id, and carry data both ways; each side's latency is the larger wish.
func TestRendezvousLoopback(t *testing.T) {
	for _, c := range []struct {
		name       string
		passphrase string
		sid        string
	}{
		{"plain", "", ""},
		{"passphrase", "rendezvous-secret", ""},
		{"stream id", "rendezvous-secret", "rdv/live/cam1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, errA, errB := rdvPair(t,
				Config{Latency: 80 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				Config{Latency: 150 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				0, 0)
			if errA != nil || errB != nil {
				t.Fatalf("rendezvous: %v / %v", errA, errB)
			}
			for _, x := range []*Conn{a, b} {
				if x.Latency() != 150*time.Millisecond || x.PeerLatency() != 150*time.Millisecond {
					t.Errorf("latency %v / %v, want 150 ms both ways", x.Latency(), x.PeerLatency())
				}
				if x.Encrypted() != (c.passphrase != "") || x.StreamID() != c.sid {
					t.Errorf("encrypted %v stream id %q", x.Encrypted(), x.StreamID())
				}
			}
			if a.RemoteAddr().String() != b.LocalAddr().String() || b.RemoteAddr().String() != a.LocalAddr().String() {
				t.Errorf("addresses %v-%v, %v-%v", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr())
			}
			exchange(t, a, b, 500)
		})
	}
}

// TestInteropRendezvousLibsrtSends: libsrt in rendezvous mode → our Rendezvous.
func TestInteropRendezvousLibsrtSends(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			in, ours, its := udpPort(t), udpPort(t), udpPort(t)
			startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=rendezvous&port=%d&latency=200%s", loopback(ours), its, kmQuery(pass, 0)))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 120 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Latency() != 200*time.Millisecond || c.Encrypted() != (pass != "") {
				t.Errorf("latency %v encrypted %v", c.Latency(), c.Encrypted())
			}
			relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt rendezvous to ours")
		})
	}
}

// TestInteropRendezvousLibsrtReads: our Rendezvous → libsrt in rendezvous mode.
func TestInteropRendezvousLibsrtReads(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			all := bytes.Join(clip, nil)
			ours, its := udpPort(t), udpPort(t)
			s := startSLT(t, fmt.Sprintf("srt://%s?mode=rendezvous&port=%d%s", loopback(ours), its, kmQuery(pass, 0)), "file://con")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 200 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
				t.Fatal(err)
			}
			checkSLTOutput(t, s, c, all)
		})
	}
}

// TestRendezvousHostile: while one side of a rendezvous waits, another address floods it with
// garbage and forged handshakes (dropped and counted), its peer's address with junk handshakes
// (the queue stays bounded), and then the peer, played by hand, concludes and repeats its
// handshakes out of order after the connection: each repeat gets the agreement, nothing breaks.
func TestRendezvousHostile(t *testing.T) {
	pa := udpPort(t)
	peer := loopbackUDP(t)
	pb := peer.LocalAddr().(*net.UDPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		c   *Conn
		err error
	}
	res := make(chan result, 1)
	go func() {
		c, err := rendezvousCookie(ctx, loopback(pa), loopback(pb), Config{ConnectTimeout: 15 * time.Second, Log: discardLog()}, 0x40000000)
		res <- result{c, err}
	}()
	// Our side's first wave.
	recvHS := func(want wire.HandshakeType) (wire.Control, wire.Handshake) {
		t.Helper()
		buf := make([]byte, 2048)
		for {
			_ = peer.SetReadDeadline(time.Now().Add(3 * time.Second))
			n, _, err := peer.ReadFromUDP(buf)
			if err != nil {
				t.Fatalf("waiting for %v: %v", want, err)
			}
			var ctl wire.Control
			var hs wire.Handshake
			if wire.ParseControl(buf[:n], &ctl) == nil && ctl.Type == wire.CtrlHandshake && wire.ParseHandshake(ctl.CIF, &hs) == nil && hs.Type == want {
				return ctl, hs
			}
		}
	}
	_, wave := recvHS(wire.HSWaveAHand)
	if wave.Version != 5 || wave.Cookie != 0x40000000 || wave.SocketID == 0 || wave.HSCmd != 0 {
		t.Fatalf("wave %+v", wave)
	}
	ours := wave.SocketID
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: pa}

	// The flood from another address: all dropped, none reaches the handshake.
	attacker := loopbackUDP(t)
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 1500)
	const flood = 3000
	for i := range flood {
		n := 16 + rng.IntN(len(buf)-16)
		for j := range n {
			buf[j] = byte(rng.Uint32())
		}
		switch i % 3 {
		case 0: // a wave that would win, or a rejection, to socket 0 or ours
			hs := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: 9, Cookie: 0x7FFFFFFF}
			if i%2 == 0 {
				hs.Type = wire.Rejection(uint32(RejectBadSecret))
			}
			n = copy(buf, appendHandshakePacket(nil, uint32(i%2)*ours, 1, &hs))
		case 1:
			buf[0], buf[1] = 0x80, 0
			binary.BigEndian.PutUint32(buf[12:], ours)
		}
		_, _ = attacker.WriteToUDP(buf[:n], to)
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	// Junk from the peer's own address: handshakes of other sockets, truncated ones.
	before := heapInUse()
	for i := range 20000 {
		hs := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: uint32(1000 + i), Cookie: 0}
		b := appendHandshakePacket(nil, 0, 1, &hs)
		if i%2 == 0 {
			b = b[:16+40]
		}
		_, _ = peer.WriteToUDP(b, to)
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	if grown := int64(heapInUse()) - int64(before); grown > 1<<20 {
		t.Errorf("heap grew %d bytes during the junk", grown)
	}
	// The peer: its wave loses the contest; our side concludes with HSREQ.
	pw := wire.Handshake{Version: 5, Type: wire.HSWaveAHand, SocketID: 0x777, Cookie: 0x20000000, InitialSeq: 5000, MTU: 1500, FlowWindow: 8192}
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, 0, 1, &pw), to)
	ctl, req := recvHS(wire.HSConclusion)
	if ctl.DestSocket != 0x777 || req.HSCmd != wire.ExtHSReq || req.SocketID != ours {
		t.Fatalf("conclusion to %#x: %+v", ctl.DestSocket, req)
	}
	// A conclusion of another cookie is ignored; the HSRSP concludes.
	rsp := pw
	rsp.Type, rsp.Cookie = wire.HSConclusion, 0x20000001
	putHSRsp(&rsp, 120_000, 120_000, nil)
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 2, &rsp), to)
	rsp.Cookie = 0x20000000
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 3, &rsp), to)
	recvHS(wire.HSAgreement)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.c
	defer c.Close()
	if d := c.m.dropped.Load(); d < flood*9/10 {
		t.Errorf("%d datagrams dropped, want the flood's %d", d, flood)
	}
	// After the connection: repeated and belated handshakes each get the agreement; a
	// rejection and garbage change nothing.
	for _, h := range []wire.Handshake{rsp, pw, rsp} {
		_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 4, &h), to)
		recvHS(wire.HSAgreement)
	}
	rej := pw
	rej.Type = wire.Rejection(uint32(RejectPeer))
	_, _ = peer.WriteToUDP(appendHandshakePacket(nil, ours, 5, &rej), to)
	_, _ = peer.WriteToUDP([]byte{0x80, 0, 0, 0, 1, 2, 3}, to)
	if _, err := c.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	for {
		_ = peer.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, _, err := peer.ReadFromUDP(buf)
		if err != nil {
			t.Fatal("no data after the hostile handshakes")
		}
		var d wire.Data
		if buf[0]&0x80 == 0 && wire.ParseData(buf[:n], &d) == nil {
			if string(d.Payload) != "still here" || d.Seq != req.InitialSeq || d.DestSocket != 0x777 {
				t.Fatalf("data %+v", d)
			}
			break
		}
	}
}

// libsrtCookie reads the cookie of the first wave-a-hand srt-live-transmit sends to loopback
// port ours: libsrt keeps it for the whole attempt, so the test can pick our role.
func libsrtCookie(t *testing.T, ours int) uint32 {
	t.Helper()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ours})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	buf := make([]byte, 2048)
	for {
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("no wave-a-hand from libsrt: %v", err)
		}
		var ctl wire.Control
		var hs wire.Handshake
		if wire.ParseControl(buf[:n], &ctl) == nil && wire.ParseHandshake(ctl.CIF, &hs) == nil &&
			hs.Type == wire.HSWaveAHand && hs.Version == 5 && hs.Cookie != 0 {
			return hs.Cookie
		}
	}
}

// TestInteropRendezvousRoles: with libsrt as the responder and as the initiator (our cookie
// picked against its), libsrt sends to us, encrypted with the initiator's keys, and we report
// the initiator's stream id. The key length is libsrt's 32 bytes in both roles: as the
// initiator we take the responder's advertised length over our 16 (what libsrt does without
// SRTO_SENDER), and srt-live-transmit, which sets SRTO_SENDER on its output, keeps its own.
func TestInteropRendezvousRoles(t *testing.T) {
	for _, initiator := range []bool{true, false} {
		t.Run(fmt.Sprintf("sluice initiator %v", initiator), func(t *testing.T) {
			clip := chunks(testClip(t))
			in, ours, its := udpPort(t), udpPort(t), udpPort(t)
			startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=rendezvous&port=%d&latency=200&streamid=from-libsrt%s",
				loopback(ours), its, kmQuery("interop-secret", 32)))
			cookie := libsrtCookie(t, ours) - 1
			wantKey, wantSID := 32, "from-libsrt"
			if initiator {
				cookie += 2
				wantSID = "from-sluice"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := rendezvousCookie(ctx, loopback(ours), loopback(its),
				Config{Passphrase: "interop-secret", PBKeyLen: 16, StreamID: "from-sluice"}, cookie)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.rcrypt == nil || c.scrypt == nil || c.rcrypt.KeyLen() != wantKey || c.scrypt.KeyLen() != wantKey || c.StreamID() != wantSID {
				t.Errorf("keys %v %v, stream id %q; want %d-byte keys, %q", c.rcrypt, c.scrypt, c.StreamID(), wantKey, wantSID)
			}
			relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt rendezvous to ours")
		})
	}
}

// TestInteropRendezvousRefused: different passphrases, and a passphrase on one side only, end
// our Rendezvous with libsrt's reason, whichever side is the initiator. libsrt 1.5.1 as the
// responder sends no rejection handshake in rendezvous mode (1.5.2 does, #2667), only a
// shutdown: then our side reports RejectPeer.
func TestInteropRendezvousRefused(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, its string
		want      error
	}{
		{"passphrases differ", "passphrase-one", "passphrase-two", ErrBadPassphrase},
		{"only ours", "passphrase-one", "", ErrNoPassphrase},
		{"only libsrt's", "", "passphrase-two", ErrNoPassphrase},
	} {
		for _, initiator := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, sluice initiator %v", c.name, initiator), func(t *testing.T) {
				ours, its := udpPort(t), udpPort(t)
				s := startSLT(t, "-a:no", fmt.Sprintf("srt://%s?mode=rendezvous&port=%d%s", loopback(ours), its, kmQuery(c.its, 0)), "file://con")
				cookie := libsrtCookie(t, ours) - 1
				if initiator {
					cookie += 2
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				conn, err := rendezvousCookie(ctx, loopback(ours), loopback(its), Config{Passphrase: c.ours}, cookie)
				if conn != nil {
					conn.Close()
				}
				var re *RejectError
				if !errors.As(err, &re) || (!errors.Is(err, c.want) && (!initiator || re.Reason != RejectPeer)) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
				select {
				case <-s.done:
				case <-time.After(10 * time.Second):
					t.Error("srt-live-transmit did not give up")
				}
			})
		}
	}
}
