package stream

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// fakeClock is a clock the tests move by hand.
type fakeClock = testutil.Clock

func newFakeClock() *fakeClock {
	return testutil.NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}

// avTracks is an H.264 video track and an AAC audio track.
var avTracks = []media.Track{
	{ID: 0, Codec: media.CodecH264, ClockRate: 90000},
	{ID: 1, Codec: media.CodecAAC, ClockRate: 48000},
}

// audioTracks is one AAC track.
var audioTracks = []media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000}}

// testOptions are quiet options on clk.
func testOptions(clk *fakeClock) Options {
	return Options{Log: slog.New(slog.DiscardHandler), Now: clk.Now}
}

// queueOptions are quiet options on clk with reader queues of size units.
func queueOptions(clk *fakeClock, size int) Options {
	opts := testOptions(clk)
	opts.QueueSize = size
	return opts
}

// vid returns a video unit on track 0 with DTS i.
func vid(i int, key bool) *media.AccessUnit {
	return &media.AccessUnit{Track: 0, PTS: int64(i), DTS: int64(i), Key: key, Payload: [][]byte{{byte(i)}}}
}

// aud returns an audio unit on track 1 with DTS i.
func aud(i int) *media.AccessUnit {
	return &media.AccessUnit{Track: 1, PTS: int64(i), DTS: int64(i), Key: true, Payload: [][]byte{{byte(i)}}}
}

// gopUnits returns one GOP of n units: a key frame, then audio and video units alternating.
func gopUnits(base, n int) []*media.AccessUnit {
	units := make([]*media.AccessUnit, n)
	for i := range units {
		switch {
		case i == 0:
			units[i] = vid(base, true)
		case i%2 == 1:
			units[i] = aud(base + i)
		default:
			units[i] = vid(base+i, false)
		}
	}
	return units
}

func mustPublish(t testing.TB, s *Stream, tracks []media.Track) *Publisher {
	t.Helper()
	p, err := s.Publish()
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := p.SetTracks(tracks); err != nil {
		t.Fatalf("SetTracks: %v", err)
	}
	return p
}

// publishing returns stream "cam" on opts, closed when the test ends, and its publisher of
// avTracks.
func publishing(t testing.TB, opts Options) (*Stream, *Publisher) {
	t.Helper()
	s := New("cam", opts)
	t.Cleanup(s.Close)
	return s, mustPublish(t, s, avTracks)
}

func mustReader(t testing.TB, s *Stream, name string) *Reader {
	t.Helper()
	r, err := s.NewReader(name)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

func writeAll(t testing.TB, p *Publisher, units ...*media.AccessUnit) {
	t.Helper()
	for _, au := range units {
		if err := p.Write(au); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
}

// readNow returns the next queued unit, or nil when the reader has none within a moment.
func readNow(t testing.TB, r *Reader) *media.AccessUnit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	au, err := r.Read(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return au
}

// mustRead returns the next unit, failing the test if none comes.
func mustRead(t testing.TB, r *Reader) *media.AccessUnit {
	t.Helper()
	// Generous: on a loaded machine the reading goroutine may be descheduled for a while.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	au, err := r.Read(ctx)
	if err != nil {
		t.Fatalf("reader %q: no unit: %v", r.Name(), err)
	}
	return au
}

// queued is how many units r has waiting.
func queued(r *Reader) int {
	return int(r.ring.tail.Load() - r.ring.head.Load())
}

// expectUnits reads len(want) units from r and checks they are want, pointer for pointer.
func expectUnits(t testing.TB, r *Reader, want []*media.AccessUnit) {
	t.Helper()
	for i, w := range want {
		if got := mustRead(t, r); got != w {
			t.Fatalf("reader %q: unit %d is %+v, want %+v", r.Name(), i, got, w)
		}
	}
}
