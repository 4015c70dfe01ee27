package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
	"go.uber.org/goleak"
)

// crashConclusion is the 65-byte datagram that crashed gosrt v0.10.0 (issue 12): an HSv5
// conclusion whose extension area is one byte.
func crashConclusion(id, cookie uint32) []byte {
	hs := wire.Handshake{Version: 5, Extension: wire.HSExtHSReq, Type: wire.HSConclusion, MTU: 1500, FlowWindow: 8192,
		SocketID: id, Cookie: cookie}
	return append(appendHandshakePacket(nil, 0, 1, &hs), 0)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestHostileInput attacks a listener while one of its connections streams: the crashing
// datagram, malformed conclusions, 20 000 inductions, and a flood of random datagrams. The
// listener stays up, keeps no state for inductions, its memory stays bounded, the live stream
// arrives whole, and a libsrt caller connects and streams afterwards.
func TestHostileInput(t *testing.T) {
	clip := chunks(testClip(t))
	requireSLT(t)
	// Only the callers of the test have stream ids; the attacker's conclusions get past the
	// parser only to be refused here.
	ln := listen(t, Config{Latency: 200 * time.Millisecond}, func(r *Request) Reject {
		if r.StreamID() == "" {
			return RejectXBadRequest
		}
		return RejectNone
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The live connection: 2 Mbit/s of numbered messages during the whole attack.
	caller, err := Dial(ctx, ln.Addr().String(), Config{Latency: 200 * time.Millisecond, StreamID: "live"})
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	live, _ := accept(ctx, t, ln)
	attackDone := make(chan struct{})
	var sent int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		msg := make([]byte, DefaultPayloadSize)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-attackDone:
				return
			case <-tick.C:
			}
			binary.BigEndian.PutUint64(msg, uint64(sent))
			if _, err := caller.Write(msg); err != nil {
				t.Error(err)
				return
			}
			sent++
		}
	}()
	received := make(chan int, 1)
	go func() {
		buf := make([]byte, 1500)
		n := 0
		for {
			k, err := live.Read(buf)
			if err != nil || k != DefaultPayloadSize || binary.BigEndian.Uint64(buf) != uint64(n) {
				received <- n
				return
			}
			n++
		}
	}()

	before := heapInUse()
	r := newRawPeer(t, ln.Addr().String())
	for range 100 {
		r.send(crashConclusion(r.id, 0))
	}
	cookie := r.induction()
	for i, c := range []struct {
		extra []byte
		want  Reject
	}{
		{[]byte{0}, RejectRogue},                                          // the crashing extension area, with a valid cookie
		{[]byte{0, 5, 0x00, 0x00, 0xAB}, RejectRogue},                     // empty SID then a stray byte
		{[]byte{0, 5, 0x00, 0x96}, RejectRogue},                           // SID of 600 bytes that is not there
		{[]byte{0, 3, 0xFF, 0xFF}, RejectRogue},                           // KM of 65535 words
		{[]byte{0, 1, 0, 0}, RejectRogue},                                 // a second, empty HSREQ
		{append([]byte{0, 5, 0, 160}, make([]byte, 640)...), RejectRogue}, // SID over 512 bytes
		{append([]byte{0, 3, 0, 50}, make([]byte, 200)...), RejectRogue},  // KM over its largest size
		// 300 unknown empty blocks are skipped, as libsrt does: the conclusion reaches decide.
		{bytes.Repeat([]byte{0, 99, 0, 0}, 300), RejectXBadRequest},
	} {
		r.id = uint32(5000 + i)
		hs := r.conclusion(cookie)
		r.send(append(r.handshake(0, &hs), c.extra...))
		ctl, rsp, ok := r.recvHandshake(time.Second)
		if !ok || ctl.DestSocket != r.id || Reject(rsp.Type.RejectReason()) != c.want {
			t.Errorf("malformed conclusion %d: answer %v to %d ok=%v, want rejection %v", i, rsp.Type, ctl.DestSocket, ok, c.want)
		}
	}

	// 20 000 inductions from 20 000 socket ids: answered, and no state kept.
	inductionsBefore := heapInUse()
	hs := wire.Handshake{Version: 4, Extension: wire.UDTDgram, InitialSeq: 1, MTU: 1500, FlowWindow: 8192, Type: wire.HSInduction}
	var answers atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r.recv(500*time.Millisecond) != nil {
			answers.Add(1)
		}
	}()
	// At most 100 inductions in flight: a burst larger than the sockets' receive buffers would
	// be lost in the kernel (on a loaded machine more so), which says nothing of the listener.
	for i := range 20000 {
		hs.SocketID = uint32(100000 + i)
		r.send(r.handshake(0, &hs))
		if i%100 == 99 {
			for wait := time.Now().Add(time.Second); answers.Load() < int64(i+1-100) && time.Now().Before(wait); {
				time.Sleep(time.Millisecond)
			}
		}
	}
	<-done
	grown := int64(heapInUse()) - int64(inductionsBefore)
	t.Logf("20000 inductions: %d answered, heap grew %d bytes", answers.Load(), grown)
	if answers.Load() < 19000 || grown > 512<<10 {
		t.Errorf("inductions: %d answered, heap grew %d bytes", answers.Load(), grown)
	}

	// A flood of random datagrams, some shaped as handshakes and some addressed to the live
	// connection (from the wrong address, so they are dropped).
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 1500)
	for i := range 50000 {
		n := rng.IntN(len(buf) + 1)
		for j := range n {
			buf[j] = byte(rng.Uint32())
		}
		if n >= 16 {
			switch i % 4 {
			case 0:
				buf[0], buf[1] = 0x80, 0
				binary.BigEndian.PutUint32(buf[12:], 0)
			case 1:
				binary.BigEndian.PutUint32(buf[12:], live.id)
			}
		}
		_, _ = r.c.Write(buf[:n])
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	after := heapInUse()
	t.Logf("heap in use before the attack %d, after %d; %d datagrams dropped", before, after, ln.m.dropped.Load())
	if int64(after)-int64(before) > 8<<20 {
		t.Errorf("heap grew by %d bytes during the attack", int64(after)-int64(before))
	}
	ln.m.mu.Lock()
	nconns := len(ln.m.conns)
	ln.m.mu.Unlock()
	if nconns != 1 {
		t.Errorf("%d connections after the attack, want the live one", nconns)
	}

	// The live stream went on, whole.
	time.Sleep(300 * time.Millisecond)
	close(attackDone)
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	caller.Close()
	if n := <-received; n != sent || sent < 100 {
		t.Errorf("live stream: %d of %d messages in order", n, sent)
	}

	// A real libsrt caller connects and streams.
	in := udpPort(t)
	startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?streamid=after&latency=200", ln.Addr()))
	c, _ := accept(ctx, t, ln)
	relayClip(ctx, t, c, in, clip, 200*time.Millisecond, "libsrt after the attack")
}

// TestHostileListenerAnswers: a caller whose listener answers with the crashing conclusion,
// or other malformed answers, gives up cleanly.
func TestHostileListenerAnswers(t *testing.T) {
	defer goleak.VerifyNone(t)
	for name, answer := range map[string]func(req wire.Handshake) []byte{
		"crash conclusion": func(req wire.Handshake) []byte { return crashConclusion(1, 0)[:0:0] },
		"oversized extension": func(req wire.Handshake) []byte {
			rsp := wire.Handshake{Version: 5, Type: wire.HSConclusion, SocketID: 77, HSCmd: wire.ExtHSRsp}
			return append(appendHandshakePacket(nil, req.SocketID, 1, &rsp), 0, 5, 0xFF, 0xFF)
		},
		"no HSRSP": func(req wire.Handshake) []byte {
			rsp := wire.Handshake{Version: 5, Type: wire.HSConclusion, SocketID: 77}
			return appendHandshakePacket(nil, req.SocketID, 1, &rsp)
		},
		"garbage": func(req wire.Handshake) []byte { return []byte{0x80, 0, 0, 0, 1, 2, 3} },
	} {
		pc := loopbackUDP(t)
		go func() {
			buf := make([]byte, 1500)
			for {
				n, from, err := pc.ReadFromUDP(buf)
				if err != nil {
					return
				}
				var ctl wire.Control
				var hs wire.Handshake
				if wire.ParseControl(buf[:n], &ctl) != nil || wire.ParseHandshake(ctl.CIF, &hs) != nil {
					continue
				}
				switch hs.Type {
				case wire.HSInduction:
					rsp := hs
					rsp.Version, rsp.Extension, rsp.Cookie = 5, wire.SRTMagic, 42
					_, _ = pc.WriteToUDP(appendHandshakePacket(nil, hs.SocketID, 1, &rsp), from)
				case wire.HSConclusion:
					b := answer(hs)
					if len(b) == 0 {
						b = crashConclusion(77, 42)
						binary.BigEndian.PutUint32(b[12:], hs.SocketID)
					}
					_, _ = pc.WriteToUDP(b, from)
				}
			}
		}()
		_, err := Dial(context.Background(), pc.LocalAddr().String(), Config{ConnectTimeout: 700 * time.Millisecond})
		if !errors.Is(err, ErrConnectTimeout) && !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: Dial: %v", name, err)
		}
		pc.Close()
	}
	time.Sleep(50 * time.Millisecond)
}
