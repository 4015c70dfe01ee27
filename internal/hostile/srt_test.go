package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// The SRT attacks (issue 12, "Hostile input").
const (
	// srtInductions is how many inductions arrive, each from its own socket id.
	srtInductions = 20000
	// srtRandom is how many random datagrams arrive.
	srtRandom = 50000
	// srtPeerIdle is the peer idle timeout of the listen input and of the module
	// (DefaultPeerIdleTimeout, 5 s; server_timeout): a caller that sends nothing is dropped.
	srtPeerIdle = 5 * time.Second
	// srtStateBytes is what the attacks may make the server hold: the silent caller's
	// connection (its state and its empty buffers, at most connBytes) and the socket's read
	// batch (32 packet buffers of 2 KiB). Inductions are answered from a SYN cookie and keep no
	// state; refused conclusions and stray datagrams keep none either.
	srtStateBytes = connBytes + 32*2048
	// srtModuleName is the SRT server module's name; stream ids address it by its slug.
	srtModuleName = "Hostile SRT"
	srtModuleSlug = "hostile-srt"
)

// srtTarget is what the SRT attacks are aimed at.
type srtTarget struct {
	addr string
	sid  string // the stream id the silent caller sends (none for a listen input)
	// connected tells whether the server shows a connection from the silent caller.
	connected func() bool
}

// srtMalformed are conclusions (after a valid induction) whose extension area is malformed:
// too short for its own headers, declaring more than it holds, or larger than any real one.
var srtMalformed = []struct {
	what string
	ext  []byte
}{
	{"the 65-byte conclusion: a 1-byte extension area", []byte{0}},
	{"a 3-byte extension area", []byte{0, 1, 0}},
	{"an HSREQ declaring 3 words, holding 1", append([]byte{0, srtExtHSReq, 0, 3}, 0, 0, 0, 0)},
	{"an HSREQ one byte short", srtHSReq()[:15]},
	{"a stream id declaring 600 bytes, holding none", append(srtHSReq(), 0, srtExtSID, 0, 150)},
	{"a key material block declaring 65535 words", append(srtHSReq(), 0, 3, 0xFF, 0xFF)},
	{"a stream id of 640 bytes (over 512)", append(srtHSReq(), srtExt(srtExtSID, bytes.Repeat([]byte("abcd"), 160))...)},
	{"an HSREQ of 100 words", srtExt(srtExtHSReq, make([]byte, 400))},
	{"key material of 50 words (over the largest, 26)", append(srtHSReq(), srtExt(3, make([]byte, 200))...)},
	{"two HSREQ blocks", append(srtHSReq(), srtHSReq()...)},
}

// attackSRT runs every SRT attack against target: a caller that completes the handshake and
// goes silent; the 65-byte conclusion (without a cookie and with one); the malformed
// conclusions; 20 000 inductions; random datagrams, some shaped as handshakes and some
// addressed to the silent connection. It checks that nothing malformed is accepted and that
// the silent caller is dropped at the peer idle timeout.
func attackSRT(t *testing.T, target srtTarget) {
	t.Helper()
	// The silent caller: a complete HSv5 handshake, then nothing, not even a keep-alive.
	silent := newSRTPeer(t, target.addr)
	const silentID = 0x5100
	ext := srtHSReq()
	flags := uint16(srtFlagHSReq)
	if target.sid != "" {
		ext = append(ext, srtSID(target.sid)...)
		flags |= srtFlagConfig
	}
	typ, serverID, ok := silent.conclusion(silentID, silent.cookie(silentID), flags, ext, 3*time.Second)
	if !ok || typ != srtConclusion {
		t.Fatalf("the silent caller's conclusion: answer %#x ok=%v, want it accepted", typ, ok)
	}
	silentAt := time.Now()
	testutil.Eventually(t, 5*time.Second, "the server shows the silent caller's connection", target.connected)

	// The 65-byte conclusion with no cookie, as the crash sent it.
	raw := newSRTPeer(t, target.addr)
	crash := srtHandshake{version: 5, extension: srtFlagHSReq, typ: srtConclusion, socketID: 0x6500}.packet(0, []byte{0})
	if len(crash) != 65 {
		t.Fatalf("the crash datagram is %d bytes, want 65", len(crash))
	}
	for range 100 {
		raw.send(crash)
	}
	// The malformed conclusions, each from a new socket id with a valid cookie.
	for i, m := range srtMalformed {
		id := uint32(0x7000 + i)
		typ, _, ok := raw.conclusion(id, raw.cookie(id), srtFlagHSReq|srtFlagConfig, m.ext, time.Second)
		if ok && typ == srtConclusion {
			t.Errorf("%s: accepted", m.what)
		}
		t.Logf("%s: answered %s", m.what, srtAnswer(typ, ok))
	}

	// 20 000 inductions from as many socket ids, answered from a cookie without state.
	var answered atomic.Int64
	flood := newSRTPeer(t, target.addr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			_ = flood.c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := flood.c.Read(buf); err != nil {
				return
			}
			answered.Add(1)
		}
	}()
	for i := range srtInductions {
		flood.send(srtHandshake{version: 4, extension: srtUDTDgram, typ: srtInduction, socketID: uint32(100000 + i)}.packet(0, nil))
		if i%200 == 199 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	<-done
	t.Logf("%d inductions: %d answered (answers past the attacker's socket buffer are lost in its kernel)", srtInductions, answered.Load())
	if answered.Load() == 0 {
		t.Errorf("no induction answered")
	}

	// Random datagrams: random lengths and bytes, a quarter shaped as handshakes to socket 0,
	// a quarter addressed to the silent connection (from another address: to be dropped).
	rng := rand.New(rand.NewPCG(12, 13))
	buf := make([]byte, 1500)
	for i := range srtRandom {
		n := rng.IntN(len(buf) + 1)
		for j := range n {
			buf[j] = byte(rng.Uint32())
		}
		if n >= srtHeaderLen {
			switch i % 4 {
			case 0:
				binary.BigEndian.PutUint32(buf[0:], 0x80000000)
				binary.BigEndian.PutUint32(buf[12:], 0)
			case 1:
				binary.BigEndian.PutUint32(buf[12:], serverID)
			}
		}
		_, _ = flood.c.Write(buf[:n])
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}

	// The silent caller is dropped once it has been silent for the peer idle timeout.
	testutil.Eventually(t, time.Until(silentAt.Add(srtPeerIdle+5*time.Second)), "the silent caller dropped", func() bool { return !target.connected() })
	t.Logf("the silent caller was gone %v after its handshake, seen once the other attacks ended (peer idle timeout %v)", time.Since(silentAt).Round(100*time.Millisecond), srtPeerIdle)
}

// srtAnswer describes a handshake answer type.
func srtAnswer(typ uint32, ok bool) string {
	switch {
	case !ok:
		return "nothing"
	case typ == srtConclusion:
		return "accepted"
	case typ >= 1000:
		return fmt.Sprintf("rejection %d", typ)
	}
	return fmt.Sprintf("handshake type %#x", typ)
}

// srtBound is the SRT cases' RSS bound.
var srtBound = budget(srtStateBytes, "the silent caller's connection and the socket's read batch")

// testSRTListen: the SRT attacks against a player's SRT listen input; then libsrt (ffmpeg)
// publishes to it and the player plays.
func testSRTListen(t *testing.T) {
	s := start(t, options{})
	pl := s.listenPlayer("srt-listen", "INPUT_TYPE_SRT_LISTEN", "UDP")
	vod, vodPort, in := pl.id, pl.port, pl.inPort
	w := s.watch()
	attackSRT(t, srtTarget{addr: fmt.Sprintf("127.0.0.1:%d", in), connected: func() bool {
		var rec struct {
			SRT []map[string]any `json:"srt"`
		}
		s.call("/api/vod/getById", map[string]any{"id": vod}, http.StatusOK, &rec)
		return len(rec.SRT) > 0
	}})
	w.stop().check(t, s, srtBound)

	publish(t, srtOut(in, "streamid=after")...)
	playHLS(t, vod, vodPort)
}

// testSRTModule: the SRT attacks against the SRT server module (the silent caller as a
// publisher); then libsrt (ffmpeg) publishes a stream to it and an SRT receiver gets it.
func testSRTModule(t *testing.T) {
	s := start(t, options{})
	mod, port := s.createOnPort("srt-servers", func(p int) map[string]any {
		return map[string]any{"server_name": srtModuleName, "server_port": p}
	})
	s.waitState("srt-servers", mod, "running", 10*time.Second)
	w := s.watch()
	attackSRT(t, srtTarget{addr: fmt.Sprintf("127.0.0.1:%d", port), sid: "publisher/" + srtModuleSlug + "/silent", connected: func() bool {
		var streams []map[string]any
		s.call("/api/srt-servers/getActiveStreams", map[string]any{"id": mod}, http.StatusOK, &streams)
		return len(streams) > 0
	}})
	w.stop().check(t, s, srtBound)

	publish(t, srtOut(port, "streamid=publisher/"+srtModuleSlug+"/cam")...)
	testutil.Eventually(t, mediaTimeout, "the module lists the publisher", func() bool {
		var streams []map[string]any
		s.call("/api/srt-servers/getActiveStreams", map[string]any{"id": mod}, http.StatusOK, &streams)
		return len(streams) > 0
	})
	receiveSRT(t, fmt.Sprintf("srt://127.0.0.1:%d?latency=200000&streamid=receiver/%s/cam", port, srtModuleSlug))
}
