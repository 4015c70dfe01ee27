package segment_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/fmp4"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// lowLatencySegmenter returns a store (an hour's window) and a low-latency segmenter into it
// (1 s segments, 333 ms parts) set to src's tracks.
func lowLatencySegmenter(t *testing.T, src *segtest.Source) (*segment.Store, *segment.Segmenter) {
	t.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: time.Hour})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: time.Second, PartTarget: 333 * time.Millisecond, Log: segtest.Quiet})
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	return st, sg
}

// lowLatencyRun feeds d of a 25 fps source with a 1 s GOP into a low-latency segmenter (1 s
// segments, 333 ms parts), and records every segment in progress the store published.
func lowLatencyRun(t *testing.T, d time.Duration) (*segment.Store, []*segment.Segment) {
	t.Helper()
	src := segtest.NewSource(25, segtest.Wall)
	st, sg := lowLatencySegmenter(t, src)
	var opens []*segment.Segment
	end := src.Elapsed() + d
	for src.Elapsed() < end {
		if err := sg.WriteUnit(src.Next()); err != nil {
			t.Fatal(err)
		}
		if o := st.Snapshot().Open; o != nil && (len(opens) == 0 || opens[len(opens)-1] != o) {
			opens = append(opens, o)
		}
	}
	return st, opens
}

// TestPartials checks the low-latency segments: each is the concatenation of its partial
// segments (a styp box, then one moof/mdat chunk per part), every part is a slice of its
// segment's bytes (no copy) no longer than the part target and not much shorter, the first part of each segment
// starts with its key frame and is the only independent one, and the parts' sample bytes are
// exactly those of the classic segment of the same source.
func TestPartials(t *testing.T) {
	t.Parallel()
	st, opens := lowLatencyRun(t, 8500*time.Millisecond)
	classic, _ := run(t, segtest.NewSource(25, segtest.Wall), time.Second, 8500*time.Millisecond)
	segs, want := st.Snapshot().Segments, classic.Snapshot().Segments
	if len(segs) != len(want) || len(segs) < 7 {
		t.Fatalf("%d low-latency segments, %d classic", len(segs), len(want))
	}
	stypSize := fmp4.StypSize()
	for i, s := range segs {
		if s.Seq != want[i].Seq || s.Start != want[i].Start || s.Duration != want[i].Duration || !s.Key {
			t.Fatalf("segment %d: seq %d start %v duration %v key %v, classic %d %v %v", i, s.Seq, s.Start, s.Duration, s.Key,
				want[i].Seq, want[i].Start, want[i].Duration)
		}
		// 1 s in parts of at most 333 ms: four, balanced (7 + 6 + 6 + 6 frames of 40 ms from
		// the second segment on, whose expected length is the first's), none a sliver.
		if len(s.Partials) != 4 {
			t.Fatalf("segment %d: %d parts", i, len(s.Partials))
		}
		var joined []byte
		var total time.Duration
		for k, p := range s.Partials {
			data := s.PartialData(&p)
			if &data[0] != &s.Data[p.Start] || p.Index != k {
				t.Fatalf("segment %d part %d is not a slice of the segment's bytes", i, k)
			}
			joined = append(joined, data...)
			total += p.Duration
			if p.Duration > 333*time.Millisecond || p.Duration < 200*time.Millisecond {
				t.Errorf("segment %d part %d lasts %v", i, k, p.Duration)
			}
			if p.Independent != (k == 0) {
				t.Errorf("segment %d part %d: independent %v", i, k, p.Independent)
			}
			box := string(data[4:8])
			if k == 0 {
				box = string(data[stypSize+4 : stypSize+8])
			}
			if box != "moof" || k == 0 && string(data[4:8]) != "styp" {
				t.Errorf("segment %d part %d starts with %q", i, k, data[:8])
			}
		}
		if !bytes.Equal(joined, s.Data) || total != s.Duration {
			t.Fatalf("segment %d: parts join to %d bytes (%v), segment %d bytes (%v)", i, len(joined), total, len(s.Data), s.Duration)
		}
		// The media of the parts is the classic segment's, track by track.
		for _, tf := range want[i].Tracks {
			pieces, ok := s.TrackData(tf.Track)
			if !ok {
				t.Fatalf("segment %d has no track %d", i, tf.Track)
			}
			var samples []byte
			for k := 1; k < len(pieces); k += 2 {
				samples = append(samples, pieces[k]...)
			}
			if !bytes.Equal(samples, want[i].Data[tf.Start:tf.End]) {
				t.Errorf("segment %d track %d: %d sample bytes in the parts, %d in the classic segment", i, tf.Track, len(samples), tf.End-tf.Start)
			}
			got, _ := s.Part(tf.Track)
			if got.BaseTime != tf.BaseTime || got.Duration != tf.Duration || got.Samples != tf.Samples {
				t.Errorf("segment %d track %d: %+v, classic %+v", i, tf.Track, got, tf)
			}
		}
	}
	// The store published each segment in progress part by part, over the bytes the segment
	// then kept.
	if len(opens) < 3*len(segs) {
		t.Fatalf("%d segments in progress published for %d segments", len(opens), len(segs))
	}
	for _, o := range opens {
		s, ok := st.Snapshot().Segment(o.Seq)
		if !ok {
			continue // the one still open
		}
		if len(o.Partials) >= len(s.Partials) || !bytes.Equal(o.Data, s.Data[:len(o.Data)]) || o.Partials[0].Start != 0 {
			t.Fatalf("segment %d in progress (%d parts) is not a prefix of the segment (%d parts)", o.Seq, len(o.Partials), len(s.Partials))
		}
		if o.Start != s.Start || o.DiscSeq != s.DiscSeq || !o.ProgramDateTime.Equal(s.ProgramDateTime) {
			t.Errorf("segment %d in progress: start %v disc %d date %v; done: %v %d %v", o.Seq, o.Start, o.DiscSeq, o.ProgramDateTime,
				s.Start, s.DiscSeq, s.ProgramDateTime)
		}
	}
}

// TestPartialTrackData decodes a low-latency segment's single-track segments (what DASH
// serves) with mp4ff: one styp, one moof per part, the samples of the track.
func TestPartialTrackData(t *testing.T) {
	t.Parallel()
	st, _ := lowLatencyRun(t, 4500*time.Millisecond)
	s := st.Snapshot().Segments[1]
	for i, tf := range s.Tracks {
		pieces, _ := s.TrackData(tf.Track)
		var b []byte
		b = append(b, s.Init.TrackData[i]...)
		for _, p := range pieces {
			b = append(b, p...)
		}
		file, err := mp4.DecodeFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("track %d: %v", tf.Track, err)
		}
		samples := 0
		var frags int
		for _, seg := range file.Segments {
			for _, f := range seg.Fragments {
				frags++
				if len(f.Moof.Trafs) != 1 {
					t.Errorf("track %d: %d trafs", tf.Track, len(f.Moof.Trafs))
				}
				samples += int(f.Moof.Traf.Trun.SampleCount())
			}
		}
		if len(file.Segments) != 1 || frags < 2 || samples != tf.Samples {
			t.Errorf("track %d: %d segments, %d fragments, %d samples (want %d)", tf.Track, len(file.Segments), frags, samples, tf.Samples)
		}
	}
}

// checkJoined fails unless every kept segment has parts that join to its bytes, none longer
// than max.
func checkJoined(t *testing.T, st *segment.Store, limit time.Duration, allIndependent bool) {
	t.Helper()
	for _, s := range st.Snapshot().Segments {
		if len(s.Partials) == 0 {
			t.Fatalf("segment %d has no parts", s.Seq)
		}
		var joined []byte
		for _, p := range s.Partials {
			joined = append(joined, s.PartialData(&p)...)
			if p.Duration > limit || p.Independent != (allIndependent || p.Index == 0) {
				t.Errorf("segment %d part %d: %v, independent %v", s.Seq, p.Index, p.Duration, p.Independent)
			}
		}
		if !bytes.Equal(joined, s.Data) {
			t.Fatalf("segment %d: parts do not join to it", s.Seq)
		}
	}
}

// TestPartialsAcrossGapAndAudioOnly: a publisher gap mid-segment ends the segment in progress
// (its parts so far make a segment, the next one is a discontinuity) and the store's segment
// in progress is then of the new timeline; an audio-only stream is cut into independent parts.
func TestPartialsAcrossGapAndAudioOnly(t *testing.T) {
	t.Parallel()
	src := segtest.NewSource(25, segtest.Wall)
	st, sg := lowLatencySegmenter(t, src)
	if err := src.Feed(sg, 2500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	restartFeed(t, src, sg, time.Second, 2600*time.Millisecond)
	win := st.Snapshot()
	checkJoined(t, st, 333*time.Millisecond, false)
	var discs int
	for _, s := range win.Segments {
		if s.Discontinuity {
			discs++
		}
	}
	if discs != 1 || win.Open == nil || win.Open.Seq != win.Newest().Seq+1 || win.Open.DiscSeq != 1 {
		t.Fatalf("%d discontinuities; open %+v", discs, win.Open)
	}

	asrc := &segtest.Source{Audio: mediatest.AAC(0), Wall: segtest.Wall}
	audio, asg := lowLatencySegmenter(t, asrc)
	if err := asrc.Feed(asg, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(audio.Snapshot().Segments); n < 3 {
		t.Fatalf("%d audio segments", n)
	}
	checkJoined(t, audio, 333*time.Millisecond, true)
}

// TestPartsDoNotWaitForAudio: a low-latency segmenter cuts a partial segment when its video is
// there, not when the audio of its time comes. The source's audio comes 300 ms after its video
// (a muxer that packs audio); the median gap between the newest video unit written and the
// end of the newest part published stays under one part, where waiting for the audio would
// add the 300 ms. Segments still hold the audio of their own time (TestAudioAlignedWithVideo
// runs the same check on low-latency segmenters).
func TestPartsDoNotWaitForAudio(t *testing.T) {
	t.Parallel()
	const part = 333 * time.Millisecond
	src := segtest.NewSource(25, segtest.Wall)
	st, sg := lowLatencySegmenter(t, src)
	var lags []time.Duration
	started, origin := false, time.Duration(0)
	for _, au := range skewedUnits(src, 20*time.Second, 300*time.Millisecond) {
		if err := sg.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
		if au.Track != src.Video.ID {
			continue
		}
		w := st.Snapshot()
		if !started {
			if len(w.Segments) == 0 {
				continue
			}
			// The first segment starts at the source's first key frame (DTS 0): the origin
			// of both timelines.
			started, origin = true, w.Segments[0].Start
		}
		edge := w.Segments[len(w.Segments)-1].End()
		if o := w.Open; o != nil && o.Seq == w.Segments[len(w.Segments)-1].Seq+1 {
			edge = o.End()
		}
		at := time.Duration(media.Rescale(au.DTS, 90000, int(time.Second)))
		lags = append(lags, at-(edge-origin))
	}
	if len(lags) < 400 {
		t.Fatalf("%d video units measured", len(lags))
	}
	slices.Sort(lags)
	p50 := lags[len(lags)/2]
	t.Logf("video written ahead of the newest part's end: p50 %v, p90 %v", p50, lags[len(lags)*9/10])
	if p50 > part {
		t.Errorf("median %v between the newest video and the newest part's end: parts wait for the audio", p50)
	}
}

// TestPartEndsWithItsLastFrame: a partial segment is published as soon as its last frame is
// written, not when the next frame comes; only a segment's last part waits for the key frame
// that ends the segment.
func TestPartEndsWithItsLastFrame(t *testing.T) {
	t.Parallel()
	const frame = 40 * time.Millisecond
	src := segtest.NewSource(25, segtest.Wall)
	st, sg := lowLatencySegmenter(t, src)
	var keyDTS int64
	early, published := 0, 0
	for src.Elapsed() < 10*time.Second {
		au := src.Next()
		before := st.Snapshot()
		if err := sg.WriteUnit(au); err != nil {
			t.Fatal(err)
		}
		if au.Track != src.Video.ID {
			continue
		}
		if au.Key {
			keyDTS = au.DTS
		}
		o := st.Snapshot().Open
		if o == nil || o == before.Open || len(o.Partials) == 0 || (before.Open != nil && before.Open.Seq == o.Seq && len(before.Open.Partials) == len(o.Partials)) {
			continue
		}
		published++
		// The newest part ends one frame after the unit just written when that unit was its
		// last; it ends at that unit when the unit was the first of the next part.
		var end time.Duration
		for _, p := range o.Partials {
			end += p.Duration
		}
		written := time.Duration(media.Rescale(au.DTS-keyDTS, 90000, int(time.Second)))
		switch end {
		case written + frame:
			early++
		case written:
		default:
			t.Fatalf("part %d of segment %d ends at %v into it; the unit just written is at %v", len(o.Partials)-1, o.Seq, end, written)
		}
	}
	// Three parts a 1 s segment are published while it is open; all of them at their last frame.
	if published < 25 || early != published {
		t.Errorf("%d of %d parts published at their last frame", early, published)
	}
}
