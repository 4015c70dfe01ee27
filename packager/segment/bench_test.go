package segment_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// BenchmarkWriteUnit measures the segmenter's per-unit cost on a 25 fps, 8 Mbit/s stream with
// AAC, 2 s segments: the cost of cutting (fragment write, store update) is spread over the
// units of a segment.
func BenchmarkWriteUnit(b *testing.B) {
	src := segtest.NewSource(50, segtest.Wall)
	src.FrameSize = 40000
	// 24 s is a whole number of video frames (600) and AAC frames (1125): laps follow on.
	const lap = 24 * time.Second
	var units []*media.AccessUnit
	for src.Elapsed() < lap {
		units = append(units, src.Next())
	}
	st := segment.NewStore(segment.StoreOptions{Window: 20 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: segtest.Quiet})
	_ = sg.SetTracks(src.Tracks())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%len(units) == 0 && i > 0 {
			b.StopTimer()
			for _, au := range units {
				d := media.Rescale(int64(lap), int(time.Second), 90000)
				if au.Track == 1 {
					d = media.Rescale(int64(lap), int(time.Second), 48000)
				}
				au.DTS += d
				au.PTS += d
			}
			b.StartTimer()
		}
		if err := sg.WriteUnit(units[i%len(units)]); err != nil {
			b.Fatal(err)
		}
	}
}

// listingDelays feeds a 2 s, 8 Mbit/s stream until n segments were listed, and returns how
// long each WriteUnit call that listed one took, sorted: the call that cuts writes the
// fragment and updates the store before it returns, so the delay from the units that end a
// segment (the next key frame, and the audio up to its presentation time) to the segment's
// listing is that call's duration. (A segment's end is known only when the next key frame
// arrives.)
func listingDelays(tb testing.TB, n int) []time.Duration {
	src := segtest.NewSource(50, segtest.Wall)
	src.FrameSize = 40000 // 8 Mbit/s at 25 fps
	st := segment.NewStore(segment.StoreOptions{Window: 20 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: segtest.Quiet})
	_ = sg.SetTracks(src.Tracks())
	var delays []time.Duration
	for units := 0; len(delays) < n; units++ {
		if units > 100*n*50 {
			tb.Fatalf("%d segments listed after %d units", len(delays), units)
		}
		au := src.Next()
		before := st.Snapshot().Added
		start := time.Now()
		if err := sg.WriteUnit(au); err != nil {
			tb.Fatal(err)
		}
		if st.Snapshot().Added != before {
			delays = append(delays, time.Since(start))
		}
	}
	slices.Sort(delays)
	return delays
}

// TestListingDelay: every segment is listed by the WriteUnit call that cuts it (the store
// counts one more segment when that call returns), one segment per 2 s of media. How long the
// call takes is BenchmarkListingDelay's (make bench), not a test's.
func TestListingDelay(t *testing.T) {
	delays := listingDelays(t, 60)
	t.Logf("key frame arrival → segment listed (2 s, 8 Mbit/s segments): p50 %v, max %v", delays[len(delays)/2], delays[len(delays)-1])
}

// BenchmarkListingDelay reports the delay from the key frame that ends a segment to its
// listing, at the median and p99 of 60 segments a run.
func BenchmarkListingDelay(b *testing.B) {
	var p50, p99 time.Duration
	for b.Loop() {
		d := listingDelays(b, 60)
		p50, p99 = p50+d[len(d)/2], p99+d[len(d)*99/100]
	}
	b.ReportMetric(float64(p50.Microseconds())/float64(b.N), "us-p50/segment")
	b.ReportMetric(float64(p99.Microseconds())/float64(b.N), "us-p99/segment")
}
