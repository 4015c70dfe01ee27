package srt

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// TestTakeOverSilentPublisher: an encoder killed without a shutdown leaves its session open
// until the peer-idle timeout (here 10 s), on the SRT server module and on a listen input
// alike. A new publisher is refused with 1409 while the old one was heard from less than
// takeoverSilence ago, and gets the stream on its first try after that, long before the idle
// timeout. A live publisher is never closed for another.
func TestTakeOverSilentPublisher(t *testing.T) {
	testutil.RequireFFmpeg(t)
	idle := Options{PeerIdleTimeout: 10 * time.Second}
	t.Run("server module", func(t *testing.T) {
		t.Parallel()
		srv, reg, stop := startServer(t, idle)
		addr := fmt.Sprintf("127.0.0.1:%d", portOf(srv.Addr()))
		takeOver(t, addr, "publisher/studio/cam", func() bool {
			s, ok := reg.Get("cam")
			return ok && s.Publishing() && s.Stats().UnitsIn > 0
		}, func() int { return len(srv.ActiveStreams()) })
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("listen input", func(t *testing.T) {
		t.Parallel()
		s := stream.New("listen", stream.Options{Log: testLog(t)})
		l, err := NewListener(s, ListenOptions{Addr: "127.0.0.1:0", Options: idle, Log: testLog(t)})
		if err != nil {
			t.Fatal(err)
		}
		stop := testutil.Run(t, l.Run)
		takeOver(t, fmt.Sprintf("127.0.0.1:%d", portOf(l.Addr())), "cam", func() bool {
			return s.Publishing() && s.Stats().UnitsIn > 0
		}, func() int {
			if s.Publishing() {
				return 1
			}
			return 0
		})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// takeOver runs the case against an SRT listener at addr: published tells that the ffmpeg
// publisher's media arrives, sessions how many publishers the listener holds.
func takeOver(t *testing.T, addr, streamID string, published func() bool, sessions func() int) {
	dial := func() (*link.Conn, error) {
		conf, err := Options{StreamID: streamID}.config()
		if err != nil {
			t.Fatal(err)
		}
		return link.Dial(context.Background(), addr, conf)
	}
	conflict := func(err error) bool {
		var re *link.RejectError
		return errors.As(err, &re) && re.Reason == link.RejectXConflict
	}

	live := publish(t, "srt://"+addr+"?streamid="+streamID+"&latency=200000", 30)
	testutil.Eventually(t, 30*time.Second, "the ffmpeg publisher's media", func() bool {
		if live.exited() {
			t.Fatalf("publisher exited: %v\n%s", live.err, live.out.String())
		}
		return published()
	})
	// A live publisher keeps its stream, however often another asks.
	for range 4 {
		if c, err := dial(); !conflict(err) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("a second publisher while the first is live: %v, want a 1409 rejection", err)
		}
		time.Sleep(700 * time.Millisecond)
	}
	if sessions() != 1 || !published() {
		t.Fatal("the live publisher lost its stream")
	}

	// Killed: no shutdown reaches the listener, the session stays.
	if err := live.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var taken *link.Conn
	tries := 0
	for time.Since(killed) < 8*time.Second {
		c, err := dial()
		tries++
		if err == nil {
			taken = c
			break
		}
		if !conflict(err) {
			t.Fatalf("new publisher after %v: %v, want 1409 or success", time.Since(killed), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if taken == nil {
		t.Fatalf("no new publisher within 8 s of the kill (%d tries); the idle timeout is 10 s", tries)
	}
	defer taken.Close()
	took := time.Since(killed)
	t.Logf("new publisher took the stream %v after the kill, on try %d", took.Round(time.Millisecond), tries)
	if took < takeoverSilence {
		t.Errorf("taken after %v, before the old publisher was silent for %v", took, takeoverSilence)
	}
	if took > takeoverSilence+2*time.Second {
		t.Errorf("taken after %v, want within 2 s of %v of silence", took, takeoverSilence)
	}
}
