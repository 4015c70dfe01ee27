package bench

import (
	"math"
	"slices"
	"testing"
	"time"
)

// synthClip is a transport stream of n packets where every 10th packet is the same PAT (so its
// content repeats) and the others are video packets numbered by their continuity counter and
// a unique PES PTS.
func synthClip(n int) []byte {
	var data []byte
	for i := range n {
		if i%10 == 0 {
			data = append(data, tsPkt(0, 0, false, 0)...)
			continue
		}
		data = append(data, tsPkt(0x100, uint8(i), true, int64(i)*3000)...)
	}
	return data
}

// TestClipMatcher: packets read in order are placed at their index; a content that repeats is
// left unplaced before the first placement and placed at its next occurrence after it; a gap
// counts as lost packets; a packet from no clip is unplaced.
func TestClipMatcher(t *testing.T) {
	data := synthClip(60)
	idx := newPacketIndex(data)
	m := newClipMatcher(idx)
	pkt := func(i int) []byte { return data[i*tsSize : (i+1)*tsSize] }
	if got := m.place(pkt(20)); got != -1 {
		t.Fatalf("a repeated PAT placed at %d before anything else", got)
	}
	var got []int
	for _, i := range []int{21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 35, 36, 40, 41} {
		got = append(got, m.place(pkt(i)))
	}
	want := []int{21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 35, 36, 40, 41}
	if !slices.Equal(got, want) {
		t.Fatalf("placed %v, want %v", got, want)
	}
	if m.lost() != 6 || m.unplaced != 1 {
		t.Fatalf("lost %d (want 6: 32-34, 37-39), unplaced %d (want 1)", m.lost(), m.unplaced)
	}
	if got := m.place(tsPkt(0x200, 3, false, 0)); got != -1 || m.unplaced != 2 {
		t.Fatalf("a foreign packet placed at %d", got)
	}
	// A packet of the clip from before the last placed one is not placed again.
	if got := m.place(pkt(25)); got != -1 {
		t.Fatalf("an old packet placed at %d", got)
	}
	// A PAT after the last placed one goes to its next occurrence.
	if got := m.place(pkt(0)); got != 50 {
		t.Fatalf("the PAT placed at %d, want 50", got)
	}
}

// TestLatencies: a payload's latency is its read time less the pacer's write of the chunk of
// its last packet less the configured latency; payloads written before the receiver joined,
// never written, or read after the pacer stopped are left out.
func TestLatencies(t *testing.T) {
	c := &Clip{At: make([]time.Duration, 4)}
	s := newSent(c)
	t0 := time.Now()
	for i := range 3 { // chunk 3 was never sent
		s.at[i] = t0.Add(time.Duration(i) * 100 * time.Millisecond)
	}
	since := t0.Add(50 * time.Millisecond)
	stamps := []stamp{
		{at: t0.Add(401 * time.Millisecond), packet: 6},  // chunk 0: sent before the join
		{at: t0.Add(503 * time.Millisecond), packet: 7},  // chunk 1: 403 ms
		{at: t0.Add(610 * time.Millisecond), packet: 20}, // chunk 2: 410 ms
		{at: t0.Add(900 * time.Millisecond), packet: 21}, // chunk 3: not sent
	}
	got := latencies(stamps, s, since, 400*time.Millisecond)
	if len(got) != 2 || got[0] < 2.999 || got[0] > 3.001 || got[1] < 9.999 || got[1] > 10.001 {
		t.Fatalf("latencies %v, want [3 10]", got)
	}
	// Once the pacer stopped, what comes is left out.
	s.End = t0.Add(600 * time.Millisecond)
	if got := latencies(stamps, s, since, 400*time.Millisecond); len(got) != 1 || got[0] < 2.999 || got[0] > 3.001 {
		t.Fatalf("latencies after the end %v, want [3]", got)
	}
}

// TestRSSPerReader: what each reader adds is the difference of the two peaks over the readers.
func TestRSSPerReader(t *testing.T) {
	if got := rssPerReader(80<<20, 30<<20, 50); got != float64(50<<20)/50 {
		t.Fatalf("per reader %v", got)
	}
	if got := rssPerReader(29<<20, 30<<20, 50); got >= 0 {
		t.Fatalf("a server that shrank: %v, want negative", got)
	}
	for _, c := range [][3]int64{{80, 30, 0}, {80, 0, 50}, {0, 30, 50}} {
		if got := rssPerReader(c[0], c[1], int(c[2])); !math.IsNaN(got) {
			t.Fatalf("rssPerReader%v = %v, want NaN", c, got)
		}
	}
}
