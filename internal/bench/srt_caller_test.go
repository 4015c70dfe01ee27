package bench

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// relayListener is an SRT listener that refuses callers (1404, as the server module refuses a
// receiver of a stream not published) until open is set.
func relayListener(t *testing.T, open *atomic.Bool) *link.Listener {
	t.Helper()
	ln, err := link.Listen("127.0.0.1:0", link.Config{Latency: srtLatency}, func(*link.Request) link.Reject {
		if !open.Load() {
			return link.RejectXNotFound
		}
		return link.RejectNone
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// TestSRTCallerStamps: a caller receiver retries while it is refused, then places every packet
// of the clip it reads: every payload timed, none lost or unplaced, each no sooner than the
// latency after the pacer wrote it, and its frames placed from the first to the last.
func TestSRTCallerStamps(t *testing.T) {
	c := testClip(t)
	var open atomic.Bool
	ln := relayListener(t, &open)
	k := callSRT(ln.Addr().String(), "receiver/bench/cam", c, true)
	defer k.Close()
	time.Sleep(300 * time.Millisecond) // a few refused dials
	if got := k.Received(); got.FirstPTS != -1 {
		t.Fatalf("received %+v before being let in", got)
	}
	open.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.waitUp(ctx); err != nil {
		t.Fatal(err)
	}
	sent := newSent(c)
	if err := Pace(ctx, c, conn, sent); err != nil {
		t.Fatal(err)
	}
	read := func() int {
		k.mu.Lock()
		defer k.mu.Unlock()
		return len(k.stamps)
	}
	testutil.Eventually(t, 5*time.Second, "every payload at the caller", func() bool { return read() >= len(c.At) })
	_ = conn.Close()
	got := k.Received()
	if got.Frames != 100 || got.CCErrors != 0 || !got.Placed || got.Joined != 0 || got.LastFrame != 99 {
		t.Fatalf("received %+v, want the 100 frames placed", got)
	}
	delays, lost, unplaced := k.Stamped(sent, 0)
	if read() != len(c.At) || lost != 0 || unplaced != 0 {
		t.Fatalf("%d payloads timed of %d, %d lost, %d unplaced", read(), len(c.At), lost, unplaced)
	}
	// Those read after the pacer returned (the last 200 ms) are left out.
	if len(delays) < len(c.At)*3/4 || len(delays) == len(c.At) {
		t.Fatalf("%d payloads of %d read before the pacer returned", len(delays), len(c.At))
	}
	// TSBPD delivers a payload at its send time plus the latency, not sooner but for the link's
	// delivery grid (up to min(latency/8, 10 ms) early, see link.Conn.Read) and the error of the
	// receiver's time base (set from the handshake, then drift tracking): 10 + 5 ms allowed.
	if low := slices.Min(delays); low < float64(srtLatency.Milliseconds())-15 {
		t.Fatalf("a payload came %v ms after the pacer wrote it, under the %v latency: misplaced", low, srtLatency)
	}
}

// TestSRTCallerJoinsLate: a receiver served from a key frame in the middle of the clip, with a
// PAT and PMT before it as the server module sends them, is placed from that frame on: the
// frames before it are not counted as missing, and the repeated tables stay unplaced.
func TestSRTCallerJoinsLate(t *testing.T) {
	c := testClip(t)
	var open atomic.Bool
	open.Store(true)
	ln := relayListener(t, &open)
	k := callSRT(ln.Addr().String(), "receiver/bench/cam", c, true)
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key, psi := -1, []byte(nil)
	for i := range len(c.Data) / tsSize {
		pkt := c.Data[i*tsSize : (i+1)*tsSize]
		p, _ := parseTS(pkt)
		if pts, ok := videoPTS(p.payload); ok && p.pusi {
			if f, _ := c.FrameIndex(pts); f == 25 {
				key = i
				break
			}
		}
		if p.pid == 0 || p.pid == 0x1000 { // ffmpeg's PAT and PMT
			psi = append(psi[:0:0], pkt...)
		}
	}
	if key < 0 || len(psi) == 0 {
		t.Fatal("no frame 25 or no PAT/PMT in the clip")
	}
	if _, err := conn.Write(psi); err != nil {
		t.Fatal(err)
	}
	for rest := c.Data[key*tsSize:]; len(rest) > 0; {
		n := min(chunkSize, len(rest))
		if _, err := conn.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
		time.Sleep(200 * time.Microsecond)
	}
	testutil.Eventually(t, 5*time.Second, "75 frames at the caller", func() bool { return k.Received().Frames >= 75 })
	got := k.Received()
	if got.Frames != 75 || got.CCErrors != 0 || !got.Placed || got.Joined != 25 || got.LastFrame != 99 {
		t.Fatalf("received %+v, want frames 25 to 99 placed", got)
	}
	_, lost, unplaced := k.Stamped(newSent(c), 0)
	if lost != 0 || unplaced != 1 {
		t.Fatalf("%d lost, %d unplaced, want 0 and 1 (the repeated table)", lost, unplaced)
	}
}
