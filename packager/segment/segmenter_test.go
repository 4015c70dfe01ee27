package segment_test

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// restartFeed restarts src after gap (a new publisher session) and feeds d more of it into sg.
func restartFeed(t *testing.T, src *segtest.Source, sg *segment.Segmenter, gap, d time.Duration) {
	t.Helper()
	src.Restart(gap)
	if err := src.Feed(sg, d); err != nil {
		t.Fatal(err)
	}
}

// run feeds d of a source with the given GOP (frames at 25 fps) into a fresh segmenter.
func run(t *testing.T, src *segtest.Source, target time.Duration, d time.Duration) (*segment.Store, *segment.Segmenter) {
	t.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: time.Hour})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: target, Log: segtest.Quiet})
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	if err := src.Feed(sg, d); err != nil {
		t.Fatal(err)
	}
	return st, sg
}

func TestCutAtKeyFrames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gop    int // frames at 25 fps
		target time.Duration
		want   time.Duration
	}{
		{"gop 2s target 3s", 50, 3 * time.Second, 4 * time.Second},
		{"gop 1s target 3s", 25, 3 * time.Second, 3 * time.Second},
		{"gop 2s target 2s", 50, 2 * time.Second, 2 * time.Second},
		{"gop 3s target 2s", 75, 2 * time.Second, 3 * time.Second},
		{"gop 0.4s target 1s", 10, time.Second, 1200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := run(t, segtest.NewSource(tc.gop, segtest.Wall), tc.target, 30*time.Second)
			segs := st.Snapshot().Segments
			if len(segs) < 5 {
				t.Fatalf("%d segments", len(segs))
			}
			gop := time.Duration(tc.gop) * time.Second / 25
			for i, s := range segs {
				if s.Seq != int64(i) || !s.Key || s.Discontinuity {
					t.Errorf("segment %d: seq %d key %v disc %v", i, s.Seq, s.Key, s.Discontinuity)
				}
				if s.Duration != tc.want {
					t.Errorf("segment %d lasts %v, want %v", i, s.Duration, tc.want)
				}
				// EXTINF stays within one GOP of the fragment size.
				if s.Duration < tc.target-50*time.Millisecond || s.Duration >= tc.target+gop {
					t.Errorf("segment %d lasts %v: not within a GOP of %v", i, s.Duration, tc.target)
				}
				if i > 0 && segs[i-1].End() != s.Start {
					t.Errorf("segment %d starts at %v, previous ended at %v", i, s.Start, segs[i-1].End())
				}
				if v, ok := s.Part(0); !ok || !v.Key || v.BaseTime != int64(s.Start)*90000/int64(time.Second) {
					t.Errorf("segment %d video part %+v", i, v)
				}
			}
			// The timeline starts near zero, so it is shifted by 10 s.
			if segs[0].Start != 10*time.Second {
				t.Errorf("first start %v", segs[0].Start)
			}
		})
	}
}

func TestAudioOnly(t *testing.T) {
	src := &segtest.Source{Audio: mediatest.AAC(0), Wall: segtest.Wall}
	st, _ := run(t, src, 2*time.Second, 20*time.Second)
	segs := st.Snapshot().Segments
	if len(segs) < 8 {
		t.Fatalf("%d segments", len(segs))
	}
	frame := 1024 * time.Second / 48000
	for i, s := range segs {
		if !s.Key || s.Duration < 2*time.Second || s.Duration > 2*time.Second+frame {
			t.Errorf("segment %d: %v key %v", i, s.Duration, s.Key)
		}
	}
}

func TestDropBeforeKeyFrame(t *testing.T) {
	src := segtest.NewSource(50, segtest.Wall)
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second})
	if err := sg.WriteUnit(src.Next()); err == nil {
		t.Error("unit before tracks accepted")
	}
	_ = sg.SetTracks(src.Tracks())
	if err := src.Feed(sg, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// The first (key) frame went before the tracks: units wait for the key frame at 2 s.
	if d := sg.Dropped(); d < 50 {
		t.Errorf("dropped %d", d)
	}
	if segs := st.Snapshot().Segments; len(segs) != 1 || segs[0].Start != 12*time.Second {
		t.Errorf("segments %d", len(segs))
	}
}

func TestForcedCut(t *testing.T) {
	src := segtest.NewSource(0, segtest.Wall) // one key frame, then none
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second, MaxDuration: 4 * time.Second})
	_ = sg.SetTracks(src.Tracks())
	if err := src.Feed(sg, 17*time.Second); err != nil {
		t.Fatal(err)
	}
	segs := st.Snapshot().Segments
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4 forced at 4 s", len(segs))
	}
	if !segs[0].Key || segs[1].Key || segs[1].Duration != 4*time.Second {
		t.Errorf("forced segment: key %v, %v", segs[1].Key, segs[1].Duration)
	}
}

func TestDiscontinuity(t *testing.T) {
	src := segtest.NewSource(50, segtest.Wall)
	st, sg := run(t, src, 2*time.Second, 10*time.Second)
	restartFeed(t, src, sg, 5*time.Second, 10*time.Second)
	// A second marker without units in between counts once.
	src.Restart(time.Second)
	_ = sg.Discontinuity()
	if err := src.Feed(sg, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	segs := st.Snapshot().Segments
	var discs []int
	for i, s := range segs {
		if s.Discontinuity {
			discs = append(discs, i)
		}
		if s.Init.Version != 1 {
			t.Errorf("segment %d init version %d", i, s.Init.Version)
		}
	}
	// 10 s: five segments, then the gap ends the sixth (the units after 10 s) early.
	if len(discs) != 2 || discs[0] != 5 || discs[1] != 10 {
		t.Fatalf("discontinuities at %v", discs)
	}
	d := segs[discs[0]]
	if d.DiscSeq != 1 || segs[discs[0]-1].DiscSeq != 0 || segs[discs[1]].DiscSeq != 2 {
		t.Errorf("disc seqs %d %d", segs[discs[0]-1].DiscSeq, d.DiscSeq)
	}
	if d.Start != 10*time.Second {
		t.Errorf("new timeline starts at %v", d.Start)
	}
	prev := segs[discs[0]-1]
	if gap := d.ProgramDateTime.Sub(prev.ProgramDateTime.Add(prev.Duration)); gap < 4*time.Second || gap > 6*time.Second {
		t.Errorf("date gap %v", gap)
	}
}

func TestTracksChange(t *testing.T) {
	src := segtest.NewSource(50, segtest.Wall)
	st, sg := run(t, src, 2*time.Second, 6*time.Second)
	// The same tracks again change nothing.
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	n := len(st.Snapshot().Segments)
	src.Video = mediatest.H265(0)
	src.Restart(0)
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	if len(st.Snapshot().Segments) != n+1 {
		t.Fatalf("open segment not closed on a track change")
	}
	if err := src.Feed(sg, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	segs := st.Snapshot().Segments
	s := segs[n+1]
	if !s.Discontinuity || s.Init.Version != 2 || s.Init.Codecs[0] != "hvc1.1.6.L60.90" {
		t.Errorf("segment after change: disc %v version %d codecs %v", s.Discontinuity, s.Init.Version, s.Init.Codecs)
	}
	if segs[n].Init.Version != 1 || segs[n].Discontinuity {
		t.Errorf("segment before change")
	}
	// A track fMP4 cannot carry is left out; the others go on.
	bad := append(src.Tracks(), media.Track{ID: 2, Codec: media.CodecUnknown, ClockRate: 1000})
	if err := sg.SetTracks(bad); err != nil {
		t.Fatal(err)
	}
	if err := sg.SetTracks([]media.Track{{Codec: media.CodecUnknown, ClockRate: 1000}}); err == nil {
		t.Error("no usable track accepted")
	}
}

func TestProgramDateTime(t *testing.T) {
	st, _ := run(t, segtest.NewSource(50, segtest.Wall), 2*time.Second, 20*time.Second)
	segs := st.Snapshot().Segments
	if !segs[0].ProgramDateTime.Equal(segtest.Wall) {
		t.Errorf("first date %v", segs[0].ProgramDateTime)
	}
	for i := 1; i < len(segs); i++ {
		if want := segs[i-1].ProgramDateTime.Add(segs[i-1].Duration); !segs[i].ProgramDateTime.Equal(want) {
			t.Errorf("segment %d date %v, want %v", i, segs[i].ProgramDateTime, want)
		}
	}
}

// TestTimelineStart: audio that arrives after the first key frame of a timeline but belongs
// before it is dropped, and the timeline's origin and date follow its first segment.
func TestTimelineStart(t *testing.T) {
	src := segtest.NewSource(25, segtest.Wall)
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second, Log: segtest.Quiet})
	_ = sg.SetTracks(src.Tracks())
	key := src.Next() // video key frame at 0
	key.DTS, key.PTS = 90000, 90000
	late := &media.AccessUnit{Track: 1, DTS: 43200, PTS: 43200, Key: true, Payload: [][]byte{{1, 2}}} // 0.9 s
	ok := &media.AccessUnit{Track: 1, DTS: 48000, PTS: 48000, Key: true, Payload: [][]byte{{1, 2}}}   // 1.0 s
	for _, au := range []*media.AccessUnit{key, late, ok} {
		if err := sg.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	_ = sg.Flush()
	seg := st.Snapshot().Segments[0]
	a, found := seg.Part(1)
	if !found || a.Samples != 1 || a.BaseTime != 48000+480000 || sg.Dropped() != 1 {
		t.Fatalf("audio part %+v, dropped %d", a, sg.Dropped())
	}
	tl := seg.Timeline
	if tl == nil || tl.Seq != 0 || tl.Origin != 11*time.Second || !tl.DateTime.Equal(seg.ProgramDateTime) {
		t.Errorf("timeline %+v", tl)
	}
}

func TestTimelines(t *testing.T) {
	src := segtest.NewSource(50, segtest.Wall)
	st, sg := run(t, src, 2*time.Second, 6*time.Second)
	restartFeed(t, src, sg, 2*time.Second, 6*time.Second)
	segs := st.Snapshot().Segments
	for i, s := range segs {
		if s.Timeline.Seq != s.DiscSeq || s.Timeline.Origin > s.Start {
			t.Errorf("segment %d: timeline %+v, disc seq %d", i, s.Timeline, s.DiscSeq)
		}
		if i > 0 && (s.Timeline == segs[i-1].Timeline) == s.Discontinuity {
			t.Errorf("segment %d: timeline shared across a gap, or split without one", i)
		}
	}
}

// shifted adds an offset to the timestamps of the units it passes on.
type shifted struct {
	w   segtest.Writer
	off map[int]int64
}

func (s shifted) WriteUnit(au *media.AccessUnit) error {
	au.DTS += s.off[au.Track]
	au.PTS += s.off[au.Track]
	return s.w.WriteUnit(au)
}

// TestTimestampJump: a clock jump inside a session starts a new timeline instead of making a
// segment that lasts the jump.
func TestTimestampJump(t *testing.T) {
	for _, jump := range []time.Duration{time.Hour, -30 * time.Second} {
		src := segtest.NewSource(50, segtest.Wall)
		st, sg := run(t, src, 2*time.Second, 40*time.Second)
		off := map[int]int64{0: int64(jump / time.Second * 90000), 1: int64(jump / time.Second * 48000)}
		if err := src.Feed(shifted{sg, off}, 6*time.Second); err != nil {
			t.Fatal(err)
		}
		var discs int
		for i, s := range st.Snapshot().Segments {
			if s.Duration > 2*time.Second {
				t.Errorf("jump %v: segment %d lasts %v", jump, i, s.Duration)
			}
			if s.Discontinuity {
				discs++
			}
		}
		if discs != 1 {
			t.Errorf("jump %v: %d discontinuities", jump, discs)
		}
	}
}
