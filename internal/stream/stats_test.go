package stream

import (
	"math"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

func TestStatsBitrate(t *testing.T) {
	clk := newFakeClock()
	s := New("cam", testOptions(clk))
	defer s.Close()
	if st := s.Stats(); st.Bitrate != 0 || st.FPS != 0 || st.Publishing || !st.LastUnit.IsZero() {
		t.Fatalf("empty stream stats %+v", st)
	}
	start := clk.Now()
	p := mustPublish(t, s, avTracks)

	// 4 Mbit/s: 25 video frames of 19800 bytes (3960 kbit/s) and 50 audio frames of 100 bytes
	// (40 kbit/s) a second, for 5 s, with a 10 ms step.
	video := make([]byte, 19800)
	audio := make([]byte, 100)
	var units, bytes int64
	var last time.Time
	for ms := 0; ms < 5000; ms += 10 {
		clk.Advance(10 * time.Millisecond)
		var au *media.AccessUnit
		switch {
		case ms%40 == 0:
			au = &media.AccessUnit{Track: 0, Key: ms%1000 == 0, Payload: [][]byte{video}}
		case ms%20 == 0:
			au = &media.AccessUnit{Track: 1, Payload: [][]byte{audio}}
		default:
			continue
		}
		au.Arrival = clk.Now()
		last = au.Arrival
		writeAll(t, p, au)
		units++
		bytes += int64(au.Size())
	}

	st := s.Stats()
	if !st.Publishing || !st.Since.Equal(start) {
		t.Errorf("Publishing %v since %v, want true since %v", st.Publishing, st.Since, start)
	}
	if st.UnitsIn != units || st.BytesIn != bytes {
		t.Errorf("UnitsIn %d BytesIn %d, want %d and %d", st.UnitsIn, st.BytesIn, units, bytes)
	}
	if math.Abs(st.Bitrate-4000)/4000 > 0.03 {
		t.Errorf("Bitrate = %.1f kbit/s, want 4000 ± 3%%", st.Bitrate)
	}
	if math.Abs(st.FPS-25)/25 > 0.03 {
		t.Errorf("FPS = %.2f, want 25 ± 3%%", st.FPS)
	}

	if d := last.Sub(st.LastUnit); d < 0 || d >= meterBucket {
		t.Errorf("LastUnit %v, want within %v before the last arrival %v", st.LastUnit, meterBucket, last)
	}

	// The input stops: the rates fall to zero within the window; LastUnit stays.
	p.Close()
	clk.Advance(2100 * time.Millisecond)
	if st := s.Stats(); st.Bitrate != 0 || st.FPS != 0 || st.Publishing || st.BytesIn != bytes {
		t.Errorf("stats 2 s after the input stopped: %+v", st)
	}
	clk.Advance(time.Hour) // past every bucket of the ring
	if st2 := s.Stats(); !st2.LastUnit.Equal(st.LastUnit) {
		t.Errorf("LastUnit an hour after the input stopped %v, want %v", st2.LastUnit, st.LastUnit)
	}
}

// Units without an Arrival time are counted at the stream's clock.
func TestStatsWithoutArrival(t *testing.T) {
	clk := newFakeClock()
	s, p := publishing(t, testOptions(clk))
	payload := make([]byte, 1000)
	for range 100 { // 2 s at 50 units a second: 400 kbit/s
		clk.Advance(20 * time.Millisecond)
		writeAll(t, p, &media.AccessUnit{Track: 0, Key: true, Payload: [][]byte{payload}})
	}
	st := s.Stats()
	if math.Abs(st.Bitrate-400)/400 > 0.05 || math.Abs(st.FPS-50)/50 > 0.05 {
		t.Errorf("Bitrate %.1f kbit/s, FPS %.1f; want 400 and 50", st.Bitrate, st.FPS)
	}
}
