package segment_test

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

func TestStoreWindow(t *testing.T) {
	st := segment.NewStore(segment.StoreOptions{Window: 20 * time.Second, Grace: 2})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second})
	src := segtest.NewSource(50, segtest.Wall)
	_ = sg.SetTracks(src.Tracks())
	if err := src.Feed(sg, 61*time.Second); err != nil {
		t.Fatal(err)
	}
	w := st.Snapshot()
	// 30 segments of 2 s were made: 10 cover the window, 2 more are the grace.
	if len(w.Segments) != 12 || w.Added != 30 {
		t.Fatalf("kept %d of %d", len(w.Segments), w.Added)
	}
	if last := w.Last(20 * time.Second); len(last) != 10 || last[0].Seq != 20 {
		t.Errorf("last 20 s: %d segments", len(last))
	}
	// Never less than three times the longest segment.
	if last := w.Last(time.Second); len(last) != 3 {
		t.Errorf("last 1 s: %d segments", len(last))
	}
	if _, ok := w.Segment(17); ok {
		t.Error("segment 17 still kept")
	}
	if s, ok := w.Segment(18); !ok || s.Seq != 18 {
		t.Error("segment 18 not kept")
	}
	if _, ok := w.Init(1); !ok {
		t.Error("init 1 missing")
	}
	var bytes int
	for _, s := range w.Segments {
		bytes += len(s.Data)
	}
	if bytes > 12*60*1200 {
		t.Errorf("kept %d bytes", bytes)
	}
}

func TestStoreWait(t *testing.T) {
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second})
	src := segtest.NewSource(25, segtest.Wall)
	_ = sg.SetTracks(src.Tracks())
	ch := st.Wait()
	if err := src.Feed(sg, 900*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("woken before a segment")
	default:
	}
	// The key frame at 1 s (presented at 1.08 s) ends the first segment: it is stored as soon
	// as the audio up to its time came too.
	if err := src.Feed(sg, 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("not woken by the segment")
	}
	if st.Snapshot().Newest().Seq != 0 {
		t.Error("newest")
	}
}
