package fmp4

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// feedGOP adds n video frames at 25 fps with B-frame-like composition offsets (the first a
// key frame) and the AAC frames of the same span, interleaved, starting at video DTS dts0.
func feedGOP(t testing.TB, f *Fragmenter, v, a media.Track, dts0 int64, n int) {
	t.Helper()
	audio := media.Rescale(dts0, 90000, 48000)
	for i := range n {
		dts := dts0 + int64(i)*3600
		pts := dts + 7200
		if i%3 == 1 {
			pts = dts + 3600*3
		}
		if err := f.Add(videoAU(v, dts, pts, i == 0, 1000+i)); err != nil {
			t.Fatal(err)
		}
		for media.Rescale(audio, 48000, 90000) < dts+3600 {
			if err := f.Add(audioAU(a, audio, 200)); err != nil {
				t.Fatal(err)
			}
			audio += 1024
		}
	}
}

func TestFragment(t *testing.T) {
	v, a := mediatest.H264(0), mediatest.AAC(1)
	f, err := NewFragmenter([]media.Track{v, a})
	if err != nil {
		t.Fatal(err)
	}
	feedGOP(t, f, v, a, 900000, 50)
	next := videoAU(v, 900000+50*3600, 900000+50*3600+7200, true, 10)
	frag, err := f.Flush(7, next)
	if err != nil || frag == nil {
		t.Fatalf("flush: %v", err)
	}
	if f.Samples() != 0 || f.Size() != 0 {
		t.Errorf("fragmenter not emptied")
	}
	init, err := InitSegment([]media.Track{v, a})
	if err != nil {
		t.Fatal(err)
	}
	file := decode(t, append(append([]byte(nil), init...), frag.Data...))
	if len(file.Segments) != 1 || len(file.Segments[0].Fragments) != 1 {
		t.Fatalf("want one segment with one fragment")
	}
	if file.Segments[0].Styp == nil {
		t.Errorf("no styp")
	}
	moof := file.Segments[0].Fragments[0].Moof
	if moof.Mfhd.SequenceNumber != 7 || len(moof.Trafs) != 2 {
		t.Fatalf("mfhd %d, %d trafs", moof.Mfhd.SequenceNumber, len(moof.Trafs))
	}
	vt, at := moof.Trafs[0], moof.Trafs[1]
	if vt.Tfdt.BaseMediaDecodeTime() != 900000 || at.Tfdt.BaseMediaDecodeTime() != 480000 {
		t.Errorf("tfdt %d %d", vt.Tfdt.BaseMediaDecodeTime(), at.Tfdt.BaseMediaDecodeTime())
	}
	if n := vt.Trun.SampleCount(); n != 50 {
		t.Errorf("video samples %d", n)
	}
	if n := at.Trun.SampleCount(); n != 94 {
		t.Errorf("audio samples %d", n)
	}
	vs, err := file.Segments[0].Fragments[0].GetFullSamples(file.Moov.Mvex.Trexs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range vs {
		if s.Dur != 3600 {
			t.Fatalf("video sample %d lasts %d", i, s.Dur)
		}
		if s.IsSync() != (i == 0) {
			t.Errorf("video sample %d sync %v", i, s.IsSync())
		}
		want := int32(7200)
		if i%3 == 1 {
			want = 10800
		}
		if s.CompositionTimeOffset != want {
			t.Errorf("video sample %d offset %d", i, s.CompositionTimeOffset)
		}
		// Sample data: SEI then slice, length-prefixed; the AUD and parameter sets are gone.
		if l := binary.BigEndian.Uint32(s.Data); l != 4 || len(s.Data) != 4+4+4+1000+i {
			t.Fatalf("video sample %d: first NALU length %d, size %d", i, l, len(s.Data))
		}
	}
	as, err := file.Segments[0].Fragments[0].GetFullSamples(file.Moov.Mvex.Trexs[1])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range as {
		if s.Dur != 1024 || len(s.Data) != 200 {
			t.Fatalf("audio sample %d: dur %d size %d", i, s.Dur, len(s.Data))
		}
	}
	if got := frag.Tracks[0]; got.BaseTime != 900000 || got.Duration != 50*3600 || got.Samples != 50 || !got.Key {
		t.Errorf("video part %+v", got)
	}
	if got := frag.Tracks[1]; got.BaseTime != 480000 || got.Duration != 94*1024 || got.Key != true {
		t.Errorf("audio part %+v", got)
	}
}

// TestTrackFragments checks that each track's Header + data slice is a valid single-track
// fragment that matches its own single-track init segment.
func TestTrackFragments(t *testing.T) {
	v, a := mediatest.H265(0), mediatest.AAC(1)
	f, _ := NewFragmenter([]media.Track{v, a})
	feedGOP(t, f, v, a, 0, 25)
	frag, err := f.Flush(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, trk := range []media.Track{v, a} {
		tf := frag.Tracks[i]
		init, err := InitSegment([]media.Track{trk})
		if err != nil {
			t.Fatal(err)
		}
		b := append(append(append([]byte(nil), init...), tf.Header...), frag.Data[tf.Start:tf.End]...)
		if len(b)-len(init) != tf.Size() {
			t.Errorf("size %d", tf.Size())
		}
		file := decode(t, b)
		fr := file.Segments[0].Fragments[0]
		if len(fr.Moof.Trafs) != 1 || fr.Moof.Traf.Tfhd.TrackID != uint32(trk.ID+1) {
			t.Fatalf("track %d: trafs %d", i, len(fr.Moof.Trafs))
		}
		ss, err := fr.GetFullSamples(file.Moov.Mvex.Trex)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != tf.Samples {
			t.Fatalf("track %d: %d samples, want %d", i, len(ss), tf.Samples)
		}
		// The last video sample has no next unit: it repeats the previous duration.
		if last := ss[len(ss)-1]; last.Dur != ss[0].Dur {
			t.Errorf("track %d: last duration %d", i, last.Dur)
		}
	}
}

func TestFragmenterShiftAndErrors(t *testing.T) {
	v := mediatest.H264(0)
	f, _ := NewFragmenter([]media.Track{v})
	if err := f.Add(videoAU(v, -3600, 0, true, 10)); !errors.Is(err, ErrTimestamp) {
		t.Errorf("negative DTS: %v", err)
	}
	f.SetShift(10 * time.Second)
	if err := f.Add(videoAU(v, -3600, 0, true, 10)); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(&media.AccessUnit{Track: 3}); !errors.Is(err, ErrUnknownTrack) || !errors.Is(err, media.ErrUnknownTrack) {
		t.Errorf("unknown track: %v", err)
	}
	// A unit of parameter sets alone adds no sample.
	if err := f.Add(&media.AccessUnit{Track: 0, DTS: 0, PTS: 0, Payload: [][]byte{v.Params.SPS}}); err != nil || f.Samples() != 1 {
		t.Errorf("parameter-set unit: %v, %d samples", err, f.Samples())
	}
	frag, err := f.Flush(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if frag.Tracks[0].BaseTime != 900000-3600 || frag.Tracks[0].Duration != 3600 {
		t.Errorf("part %+v", frag.Tracks[0])
	}
	if frag, err := f.Flush(2, nil); frag != nil || err != nil {
		t.Errorf("empty flush: %v %v", frag, err)
	}
	if _, err := NewFragmenter([]media.Track{v, v}); err == nil {
		t.Error("duplicate track accepted")
	}
}

// TestNegativeCompositionOffset checks that a PTS below the DTS survives (trun version 1).
func TestNegativeCompositionOffset(t *testing.T) {
	v := mediatest.H264(0)
	f, _ := NewFragmenter([]media.Track{v})
	_ = f.Add(videoAU(v, 7200, 3600, true, 10))
	_ = f.Add(videoAU(v, 10800, 10800, false, 10))
	frag, _ := f.Flush(1, nil)
	init, _ := InitSegment([]media.Track{v})
	file := decode(t, append(init, frag.Data...))
	ss, _ := file.Segments[0].Fragments[0].GetFullSamples(file.Moov.Mvex.Trex)
	if ss[0].CompositionTimeOffset != -3600 || ss[0].PresentationTime() != 3600 {
		t.Errorf("offset %d", ss[0].CompositionTimeOffset)
	}
	if file.Segments[0].Fragments[0].Moof.Traf.Trun.Version != 1 {
		t.Error("trun version 0")
	}
}

func TestSyncFlags(t *testing.T) {
	if !mp4.IsSyncSampleFlags(mp4.SyncSampleFlags) || mp4.IsSyncSampleFlags(mp4.SetNonSyncSampleFlags(0)) {
		t.Fatal("flag helpers")
	}
}

// TestFragmenterLetsGoOfOversizedBuffers: after a fragment much smaller than the one before,
// the buffers the big one grew are let go rather than kept for the rest of the stream.
func TestFragmenterLetsGoOfOversizedBuffers(t *testing.T) {
	v := mediatest.H264(0)
	f, err := NewFragmenter([]media.Track{v})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []struct {
		frame    int
		frames   int
		released bool
	}{
		{4 << 20, 2, false}, // 8 MiB: grown
		{4 << 20, 2, false}, // the same again: kept
		{1000, 25, true},    // 25 kB: let go
		{1000, 25, false},   // small buffers are kept
	}
	for i, s := range sizes {
		before := cap(f.tracks[0].data)
		for j := range s.frames {
			dts := int64(i*100+j) * 3600
			if err := f.Add(videoAU(v, dts, dts, j == 0, s.frame)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.Flush(uint32(i+1), nil); err != nil {
			t.Fatal(err)
		}
		after := cap(f.tracks[0].data)
		if released := after == 0 && before > 0; released != s.released {
			t.Errorf("fragment %d: buffer capacity %d → %d, want released %v", i, before, after, s.released)
		}
	}
}
