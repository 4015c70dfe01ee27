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
	src := segtest.NewSource(50, wall)
	src.FrameSize = 40000
	// 24 s is a whole number of video frames (600) and AAC frames (1125): laps follow on.
	const lap = 24 * time.Second
	var units []*media.AccessUnit
	for src.Elapsed() < lap {
		units = append(units, src.Next())
	}
	st := segment.NewStore(segment.StoreOptions{Window: 20 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
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

// TestListingDelay measures how long a segment takes to be listed once the units that end it
// arrived (the next key frame, and the audio up to its presentation time): the WriteUnit call
// that cuts writes the fragment and updates the store before it returns, so the delay is that
// call's duration. (A segment's end is known only when the next key frame arrives.)
func TestListingDelay(t *testing.T) {
	src := segtest.NewSource(50, wall)
	src.FrameSize = 40000 // 8 Mbit/s at 25 fps
	st := segment.NewStore(segment.StoreOptions{Window: 20 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
	_ = sg.SetTracks(src.Tracks())
	var delays []time.Duration
	for len(delays) < 60 {
		au := src.Next()
		before := st.Snapshot().Added
		start := time.Now()
		if err := sg.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
		if st.Snapshot().Added != before {
			delays = append(delays, time.Since(start))
		}
	}
	slices.Sort(delays)
	p50, p99, worst := delays[len(delays)/2], delays[len(delays)*99/100], delays[len(delays)-1]
	t.Logf("key frame arrival → segment listed (2 s, 8 Mbit/s segments): p50 %v, p99 %v, max %v", p50, p99, worst)
	if p50 > 50*time.Millisecond {
		t.Errorf("listing takes %v", p50)
	}
}
