package segment_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// skewedUnits returns d of a source's units in the order a muxer that sends its audio skew
// after the video of the same time (before it when negative) would deliver them.
func skewedUnits(src *segtest.Source, d, skew time.Duration) []*media.AccessUnit {
	type arrival struct {
		au *media.AccessUnit
		at time.Duration
	}
	var all []arrival
	for src.Elapsed() < d {
		au := src.Next()
		at := time.Duration(media.Rescale(au.DTS, 90000, int(time.Second)))
		if au.Track == src.Audio.ID {
			at = time.Duration(media.Rescale(au.DTS, 48000, int(time.Second))) + skew
		}
		all = append(all, arrival{au, at})
	}
	slices.SortStableFunc(all, func(a, b arrival) int { return int(a.at - b.at) })
	out := make([]*media.AccessUnit, len(all))
	for i, a := range all {
		out[i] = a.au
	}
	return out
}

// audioFrame is an AAC frame's duration in 48 kHz ticks.
const audioFrame = 1024

// TestAudioAlignedWithVideo (issue 19): whatever the order audio and video arrive in, each
// segment's audio starts with the first audio frame that starts at or after the segment's key
// frame is presented, and ends where the next segment's begins: per segment, audio start and
// end are within one audio frame after the video's.
// Low-latency segmenters (parts of 333 ms), whose video goes ahead of its audio between key
// frames, are held to the same.
func TestAudioAlignedWithVideo(t *testing.T) {
	for _, tc := range []struct {
		skew time.Duration
		part time.Duration
	}{
		{-700 * time.Millisecond, 0}, {-300 * time.Millisecond, 0}, {0, 0}, {300 * time.Millisecond, 0}, {700 * time.Millisecond, 0},
		{-300 * time.Millisecond, 333 * time.Millisecond}, {0, 333 * time.Millisecond}, {300 * time.Millisecond, 333 * time.Millisecond},
		{700 * time.Millisecond, 333 * time.Millisecond},
	} {
		skew := tc.skew
		t.Run(fmt.Sprintf("%v/parts-%v", skew, tc.part), func(t *testing.T) {
			src := segtest.NewSource(50, segtest.Wall) // a key frame every 2 s, presented 2 frames after its DTS
			st := segment.NewStore(segment.StoreOptions{Window: time.Hour})
			sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, PartTarget: tc.part, Log: segtest.Quiet})
			if err := sg.SetTracks(src.Tracks()); err != nil {
				t.Fatal(err)
			}
			units := skewedUnits(src, 20*time.Second, skew)
			audio := 0
			for _, au := range units {
				if au.Track == 1 {
					audio++
				}
				if err := sg.WriteUnit(au); err != nil {
					t.Fatal(err)
				}
			}
			if err := sg.Flush(); err != nil {
				t.Fatal(err)
			}
			segs := st.Snapshot().Segments
			if len(segs) != 10 {
				t.Fatalf("%d segments, want 10", len(segs))
			}
			const delay = 2 * 3600 // the source presents video two frames after its DTS
			samples := 0
			for i, s := range segs {
				v, _ := s.Part(0)
				a, ok := s.Part(1)
				if !ok {
					t.Fatalf("segment %d has no audio", i)
				}
				samples += a.Samples
				vStart := media.Rescale(v.BaseTime+delay, 90000, 48000)
				vEnd := media.Rescale(v.BaseTime+v.Duration+delay, 90000, 48000)
				aEnd := a.BaseTime + a.Duration
				if d := a.BaseTime - vStart; d < 0 || d >= audioFrame {
					t.Errorf("segment %d: audio starts %d ticks after the video", i, d)
				}
				if d := aEnd - vEnd; i < len(segs)-1 && (d < 0 || d >= audioFrame) {
					t.Errorf("segment %d: audio ends %d ticks after the video", i, d)
				}
			}
			// Only the audio before the first key frame is presented is dropped: 4 frames.
			if samples != audio-4 || sg.Dropped() != 4 {
				t.Errorf("%d audio frames in the segments of %d, %d units dropped; want all but 4", samples, audio, sg.Dropped())
			}
		})
	}
}

// TestAudioStops: a track that stops sending holds the others back by at most 2 s of media;
// segments go on.
func TestAudioStops(t *testing.T) {
	src := segtest.NewSource(25, segtest.Wall)
	st := segment.NewStore(segment.StoreOptions{Window: time.Hour})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second, Log: segtest.Quiet})
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	for src.Elapsed() < 20*time.Second {
		au := src.Next()
		if au.Track == 1 && au.DTS > 5*48000 {
			continue // the audio stops at 5 s
		}
		if err := sg.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	// The video was sent to 20 s: segments up to 17 s at least are out (held 2 s, cut at the
	// key frame after).
	newest := st.Snapshot().Newest()
	if end := newest.End() - 10*time.Second; end < 17*time.Second {
		t.Errorf("segments end at %v of the 20 s sent", end)
	}
}
