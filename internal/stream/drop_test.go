package stream

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

func TestSlowReaderDropsAndResumesAtKeyFrame(t *testing.T) {
	s, p := publishing(t, queueOptions(newFakeClock(), 8))
	fast := mustReader(t, s, "fast")
	slow := mustReader(t, s, "slow")

	gops := [][]*media.AccessUnit{gopUnits(0, 8), gopUnits(100, 8), gopUnits(200, 8)}
	write := func(units []*media.AccessUnit) {
		for _, au := range units {
			writeAll(t, p, au)
			expectUnits(t, fast, []*media.AccessUnit{au})
		}
	}
	write(gops[0]) // fills slow's queue
	write(gops[1]) // all dropped: the queue is full, then skipping to a key frame
	if d := slow.Dropped(); d != 8 {
		t.Fatalf("dropped %d, want 8", d)
	}
	expectUnits(t, slow, gops[0][:5]) // three left: at most half the queue
	// Resumes at the key frame, takes five units, overflows on the sixth and skips the rest.
	write(gops[2])
	if d := slow.Dropped(); d != 11 {
		t.Fatalf("dropped %d, want 11", d)
	}
	expectUnits(t, slow, gops[0][5:])
	first := mustRead(t, slow)
	if first != gops[2][0] || !first.Key || first.Track != 0 {
		t.Fatalf("first unit after the drop is %+v, want the key frame", first)
	}
	expectUnits(t, slow, gops[2][1:5])
	if au := readNow(t, slow); au != nil {
		t.Fatalf("unexpected unit %+v", au)
	}
	if fast.Dropped() != 0 {
		t.Errorf("fast reader dropped %d", fast.Dropped())
	}
}

func TestSlowReaderClosedPastLagLimit(t *testing.T) {
	clk := newFakeClock()
	s, p := publishing(t, queueOptions(clk, 16))
	fast := mustReader(t, s, "fast")
	slow := mustReader(t, s, "slow")     // never reads
	hiccup := mustReader(t, s, "hiccup") // stalls for 3 s, then catches up
	const step = 40 * time.Millisecond   // 25 units a second
	const units = int(12 * time.Second / step)
	var slowClosedAt time.Duration
	for i := range units {
		elapsed := time.Duration(i) * step
		au := vid(i, i%25 == 0)
		au.Arrival = clk.Now()
		writeAll(t, p, au)
		expectUnits(t, fast, []*media.AccessUnit{au})
		if elapsed < time.Second || elapsed >= 4*time.Second {
			for queued(hiccup) > 0 {
				mustRead(t, hiccup)
			}
		}
		if slowClosedAt == 0 && s.Stats().Readers == 2 {
			slowClosedAt = elapsed
		}
		clk.Advance(step)
	}

	// slow overflowed at 16 units (0.64 s) and is closed just past 5 s later.
	if slowClosedAt < 5600*time.Millisecond || slowClosedAt > 5800*time.Millisecond {
		t.Errorf("slow reader closed after %v, want about 5.68 s", slowClosedAt)
	}
	if _, err := slow.Read(context.Background()); !errors.Is(err, ErrReaderTooSlow) {
		t.Errorf("slow reader Read: %v, want ErrReaderTooSlow", err)
	}
	if fast.Dropped() != 0 {
		t.Errorf("fast reader dropped %d", fast.Dropped())
	}
	if hiccup.Dropped() == 0 {
		t.Error("hiccup reader dropped nothing; the test does not stall it long enough")
	}
	if errp := hiccup.err.Load(); errp != nil {
		t.Errorf("hiccup reader closed although it caught up: %v", *errp)
	}
}

func TestDropLogAtMostOnceASecond(t *testing.T) {
	clk := newFakeClock()
	var logs lockedBuffer
	opts := testOptions(clk)
	opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	opts.QueueSize = 4
	s, p := publishing(t, opts)
	r := mustReader(t, s, "r")

	overflowAndCatchUp := func(base int) {
		writeAll(t, p, gopUnits(base, 6)...) // four queued, two dropped
		expectUnits(t, r, nil)
		for queued(r) > 0 {
			mustRead(t, r)
		}
		key := vid(base+10, true)
		writeAll(t, p, key)
		expectUnits(t, r, []*media.AccessUnit{key}) // the first unit after the gap
	}
	overflowAndCatchUp(0)
	overflowAndCatchUp(100)
	clk.Advance(500 * time.Millisecond)
	overflowAndCatchUp(200)
	if n := strings.Count(logs.String(), "dropped units"); n != 1 {
		t.Fatalf("%d drop messages within a second, want 1:\n%s", n, logs.String())
	}
	clk.Advance(500 * time.Millisecond)
	overflowAndCatchUp(300)
	if n := strings.Count(logs.String(), "dropped units"); n != 2 {
		t.Fatalf("%d drop messages after a second, want 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "dropped=6 total=8") {
		t.Errorf("second message does not count the drops since the first:\n%s", logs.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
