package segment_test

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

const mib = 1 << 20

// heapInUse returns the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// slowFlood is issue 13's case: a TS stream whose timestamps advance 1 000 times slower than
// its bytes need, sent at full speed. Each unit carries 312 500 bytes and lasts 9 ticks (0.1
// ms): 25 Mbit/s of payload per media millisecond, a key frame every 50 units.
type slowFlood struct {
	units    int
	unitSize int
}

func (f slowFlood) unit(i int) *media.AccessUnit {
	p := make([]byte, f.unitSize)
	key := i%50 == 0
	p[0] = 0x41
	au := &media.AccessUnit{Track: 0, DTS: int64(i) * 9, PTS: int64(i) * 9, Key: key, Arrival: time.Now()}
	if key {
		p[0] = 0x65
		v := mediatest.H264(0)
		au.Payload = [][]byte{v.Params.SPS, v.Params.PPS, p}
	} else {
		au.Payload = [][]byte{p}
	}
	return au
}

// TestSlowTimestampsHeapBounded reproduces issue 13's player case without the network: the
// flood goes through a Stream, a Reader and segment.Run into a segmenter and its store, as in a
// player. Heap in use stays under the budgets while it runs, and comes back near the baseline
// once the stream ends and the player is dropped.
func TestSlowTimestampsHeapBounded(t *testing.T) {
	const queueBytes = 16 * mib
	storeOpts := segment.StoreOptions{Window: 4 * time.Second, Target: time.Second}
	flood := slowFlood{units: 3400, unitSize: 312_500} // 1 GB, 0.34 s of media
	// What may be held: the store's budget, a reader's queue and the GOP kept for new readers
	// (queueBytes each), the open segment at the byte rate over its time plus the burst (its
	// fragment buffer and the segment written from it), and 32 MiB for the rest (the units
	// being written, the runtime).
	span := time.Duration(flood.units*9) * time.Second / 90000
	segmentBytes := int64(float64(segment.DefaultByteRate) * (span + time.Second).Seconds())
	budget := storeOpts.Budget() + 2*queueBytes + 2*segmentBytes + 32*mib

	base := heapInUse()
	peak, kept, stats := runFlood(t, flood, queueBytes, storeOpts)
	t.Logf("sent %d MB covering %v of media: peak heap in use %d MB over the baseline (bound %d MB); "+
		"store kept %d MB; segmenter %+v", flood.units*flood.unitSize/1e6, span, (peak-base)/1e6, budget/1e6, kept/1e6, stats)
	if peak-base > budget {
		t.Errorf("heap in use reached %d MB over the baseline, over the %d MB budget", (peak-base)/1e6, budget/1e6)
	}
	if stats.OverRate == 0 {
		t.Error("nothing dropped for the byte rate: the flood did not reach the segmenter")
	}
	if after := heapInUse(); after-base > 8*mib {
		t.Errorf("heap in use %d MB over the baseline after the player was dropped", (after-base)/1e6)
	}
}

// runFlood runs the player's path for flood and returns the peak heap in use, the bytes the
// store kept at the end and the segmenter's counters. Nothing it made outlives it.
func runFlood(t *testing.T, flood slowFlood, queueBytes int, storeOpts segment.StoreOptions) (int64, int64, segment.SegmenterStats) {
	strm := stream.New("flood", stream.Options{QueueBytes: queueBytes, Log: segtest.Quiet})
	r, err := strm.NewReader("player packager")
	if err != nil {
		t.Fatal(err)
	}
	st := segment.NewStore(storeOpts)
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: storeOpts.Target, Log: segtest.Quiet})
	done := make(chan error, 1)
	go func() { done <- segment.Run(context.Background(), r, segtest.Quiet, sg) }()

	pub, err := strm.Publish()
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.SetTracks([]media.Track{mediatest.H264(0)}); err != nil {
		t.Fatal(err)
	}
	var peak, dropped int64
	for i := range flood.units {
		if err := pub.Write(flood.unit(i)); err != nil {
			t.Fatal(err)
		}
		// Let the packager keep up rather than drop most of the flood at its queue.
		if d := strm.Stats().Dropped; d > dropped {
			dropped = d
			time.Sleep(time.Millisecond)
		}
		if i%200 == 199 {
			peak = max(peak, heapInUse())
		}
	}
	sent := strm.Stats()
	strm.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	r.Close()
	// The flood must have reached the segmenter for the bound to mean anything.
	delivered := sent.UnitsIn - sent.Dropped
	t.Logf("%d of %d units reached the segmenter", delivered, flood.units)
	if delivered < int64(flood.units)/2 {
		t.Fatalf("only %d of %d units reached the segmenter", delivered, flood.units)
	}
	return peak, st.Stats().Bytes, sg.Stats()
}

// TestNormalStreamKeepsWindow: a 50 Mbit/s stream keeps its whole window under the default
// budgets, and nothing is dropped for them, cut early or evicted for bytes.
func TestNormalStreamKeepsWindow(t *testing.T) {
	src := segtest.NewSource(50, segtest.Wall)
	src.FrameSize = 250_000 // 25 fps: 50 Mbit/s
	opts := segment.StoreOptions{Window: 20 * time.Second, Target: 2 * time.Second}
	st := segment.NewStore(opts)
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: segtest.Quiet})
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	if err := src.Feed(sg, 41*time.Second); err != nil {
		t.Fatal(err)
	}
	w, stats := st.Snapshot(), st.Stats()
	// 20 segments of 2 s were made: 10 cover the window, 2 more are the grace.
	if len(w.Segments) != 12 || stats.BudgetEvicted != 0 {
		t.Errorf("kept %d segments (%d MB of a %d MB budget), %d evicted for bytes; want 12 and none",
			len(w.Segments), stats.Bytes/1e6, stats.Budget/1e6, stats.BudgetEvicted)
	}
	if last := w.Last(opts.Window); len(last) != 10 {
		t.Errorf("the playlist lists %d segments, want the whole window's 10", len(last))
	}
	// The only units dropped are the 4 audio frames before the first key frame is presented
	// (at 80 ms): a timeline's audio starts with its video.
	if s := sg.Stats(); s.OverRate != 0 || s.ByteCuts != 0 || s.Dropped != 4 {
		t.Errorf("segmenter %+v, want nothing cut and only the 4 audio frames before the video dropped", s)
	}
}

// TestSegmentByteRate: units past the byte rate are dropped, the video waits for its next key
// frame, and every segment stays within the rate over its duration plus the burst; a segment
// past MaxBytes is cut early.
func TestSegmentByteRate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frame     int   // bytes at 25 fps
		rate      int64 // SegmenterOptions.ByteRate
		maxBytes  int
		gop       int
		overRate  bool
		byteCuts  bool
		keyStarts bool // every segment starts with a key frame
	}{
		{"within the rate", 40_000, 2_000_000, 0, 50, false, false, true},
		{"twice the rate", 80_000, 1_000_000, 0, 50, true, false, true},
		{"no key frames past the byte cap", 40_000, 0, 500_000, 0, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := segtest.NewSource(tc.gop, segtest.Wall)
			src.FrameSize = tc.frame
			var logs testutil.SyncBuffer
			st := segment.NewStore(segment.StoreOptions{Window: time.Hour})
			sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, ByteRate: tc.rate,
				MaxBytes: tc.maxBytes, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := sg.SetTracks(src.Tracks()); err != nil {
				t.Fatal(err)
			}
			if err := src.Feed(sg, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			stats := sg.Stats()
			if (stats.OverRate > 0) != tc.overRate || (stats.ByteCuts > 0) != tc.byteCuts {
				t.Errorf("segmenter %+v, want over rate %v, byte cuts %v", stats, tc.overRate, tc.byteCuts)
			}
			segs := st.Snapshot().Segments
			if len(segs) < 5 {
				t.Fatalf("%d segments", len(segs))
			}
			rate := tc.rate
			if rate == 0 {
				rate = segment.DefaultByteRate
			}
			for i, s := range segs {
				samples := 0
				for _, p := range s.Tracks {
					samples += p.End - p.Start
				}
				if limit := float64(rate) * (s.Duration + time.Second).Seconds(); float64(samples) > limit {
					t.Errorf("segment %d: %d bytes in %v, over %.0f", i, samples, s.Duration, limit)
				}
				if tc.maxBytes > 0 && samples > tc.maxBytes+tc.frame+100 {
					t.Errorf("segment %d: %d bytes, over the %d-byte cap by more than a unit", i, samples, tc.maxBytes)
				}
				if v, _ := s.Part(0); tc.keyStarts && (!s.Key || !v.Key) {
					t.Errorf("segment %d does not start with a key frame", i)
				}
			}
			if tc.overRate {
				// Half the video is dropped, a GOP's tail at a time: audio goes on.
				if a, ok := segs[1].Part(1); !ok || time.Duration(a.Duration)*time.Second/48000 < 1900*time.Millisecond {
					t.Errorf("audio of segment 1: %+v", a)
				}
				if !strings.Contains(logs.String(), "budget=byte_rate limit=1000000") {
					t.Errorf("drops not logged with their budget:\n%s", logs.String())
				}
			}
			if tc.byteCuts && !strings.Contains(logs.String(), "budget=segment_bytes limit=500000") {
				t.Errorf("cuts not logged with their budget:\n%s", logs.String())
			}
		})
	}
}

// TestStoreByteBudget: past its byte budget the store evicts its oldest segments, whatever
// the window, keeps the newest, counts and logs it; MaxBytes caps the budget.
func TestStoreByteBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   segment.StoreOptions
		budget int64
	}{
		// 20 s window, 2 s segments: 26 s (the window and three segments) at 1 MB/s.
		{"by rate", segment.StoreOptions{Window: 20 * time.Second, Target: 2 * time.Second, Limit: budget.Limit{ByteRate: 1_000_000}}, 26_000_000},
		// The same window at the default rate is 325 MB: capped.
		{"by cap", segment.StoreOptions{Window: 20 * time.Second, Target: 2 * time.Second, Limit: budget.Limit{MaxBytes: 10_000_000}}, 10_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testutil.SyncBuffer
			tc.opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
			st := segment.NewStore(tc.opts)
			if st.Budget() != tc.budget || tc.opts.Budget() != tc.budget {
				t.Fatalf("budget %d, want %d", st.Budget(), tc.budget)
			}
			src := segtest.NewSource(50, segtest.Wall)
			src.FrameSize = 62_500 // 12.5 Mbit/s: 3.1 MB segments, 37.5 MB for the window
			sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: segtest.Quiet})
			_ = sg.SetTracks(src.Tracks())
			if err := src.Feed(sg, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			first := weak.Make(st.Snapshot().Segments[0])
			if err := src.Feed(sg, 56*time.Second); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			if first.Value() != nil {
				t.Error("an evicted segment is still alive")
			}
			w, stats := st.Snapshot(), st.Stats()
			var held int64
			for i, s := range w.Segments {
				held += int64(len(s.Data))
				if s.Seq != w.Segments[0].Seq+int64(i) {
					t.Fatalf("segment %d has seq %d", i, s.Seq)
				}
			}
			if held != stats.Bytes || held > tc.budget || held < tc.budget-4_000_000 {
				t.Errorf("holds %d bytes (stats %d), want just under %d", held, stats.Bytes, tc.budget)
			}
			if w.Newest().Seq != 29 || stats.Added != 30 {
				t.Errorf("newest %d of %d added", w.Newest().Seq, stats.Added)
			}
			if stats.BudgetEvicted == 0 || stats.Evicted+stats.BudgetEvicted+int64(stats.Segments) != stats.Added {
				t.Errorf("stats %+v: evictions do not add up", stats)
			}
			if !strings.Contains(logs.String(), "budget=window_bytes limit="+strconv.FormatInt(tc.budget, 10)) {
				t.Errorf("evictions not logged with their budget:\n%s", logs.String())
			}
		})
	}
}
