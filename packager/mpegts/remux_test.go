package mpegts

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// trackSource is a TrackSource whose tracks a test sets.
type trackSource struct{ tracks []media.Track }

func (s *trackSource) Tracks() []media.Track { return s.tracks }

// remuxAll appends every unit through r and returns the stream and each unit's output DTS at
// 90 kHz, failing on an error or a skipped unit.
func remuxAll(t *testing.T, r *Remuxer, aus []*media.AccessUnit) ([]byte, []int64) {
	t.Helper()
	var out []byte
	var dts []int64
	for i, au := range aus {
		b, d, ok, err := r.AppendAccessUnit(out, au)
		if err != nil || !ok {
			t.Fatalf("unit %d: ok %v, %v", i, ok, err)
		}
		out = b
		dts = append(dts, d)
	}
	return out, dts
}

// demuxAll reads a stream to its end, starting a new demuxer at a program change, and
// returns the units and how many programs it saw.
func demuxAll(t *testing.T, ts []byte) (aus []*media.AccessUnit, programs int) {
	t.Helper()
	d, programs := NewDemuxer(nil), 1
	_, _ = d.Write(ts)
	d.Flush()
	for {
		au, err := d.Read()
		switch {
		case err == nil:
			aus = append(aus, au)
		case errors.Is(err, ErrProgramChanged):
			// The rest of the stream, from the packet that changed the program, is the new
			// program: what this demuxer consumed is not replayed, so count units only.
			return aus, programs + 1
		case errors.Is(err, ErrNeedMore), errors.Is(err, io.EOF):
			return aus, programs
		default:
			t.Fatalf("Read after %d units: %v", len(aus), err)
		}
	}
}

// TestRemuxerContinuous: a source whose timestamps go back to 0 at a discontinuity comes out
// as one program whose timestamps keep increasing, media.ContinuityGap past the last ones.
func TestRemuxerContinuous(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	first := mediatest.Synth(tracks, 1, 20*90000, 25, true)
	second := mediatest.Synth(tracks, 1, 0, 25, true)
	jump := *second[0]
	jump.Discontinuity = true
	second[0] = &jump
	r, err := NewRemuxer(tracks, &trackSource{tracks})
	if err != nil {
		t.Fatal(err)
	}
	r.OnTracks = func([]media.Track) { t.Error("OnTracks called for the same tracks") }
	aus := append(append([]*media.AccessUnit{}, first...), second...)
	in := make([][2]int64, len(aus))
	for i, au := range aus {
		in[i] = [2]int64{au.PTS, au.DTS}
	}
	ts, dts := remuxAll(t, r, aus)
	for i, au := range aus {
		if au.PTS != in[i][0] || au.DTS != in[i][1] {
			t.Fatalf("unit %d modified: PTS/DTS %d/%d, was %d/%d", i, au.PTS, au.DTS, in[i][0], in[i][1])
		}
	}
	var newest int64
	for _, d := range dts[:len(first)] {
		newest = max(newest, d)
	}
	gap := media.ContinuityGap.Milliseconds() * 90
	if got := dts[len(first)]; got != newest+gap {
		t.Errorf("first DTS after the discontinuity %d, want %d (last %d + %d)", got, newest+gap, newest, gap)
	}
	if len(ts)%PacketSize != 0 {
		t.Fatalf("%d bytes, not whole packets", len(ts))
	}
	got, programs := demuxAll(t, ts)
	if programs != 1 {
		t.Errorf("%d programs, want 1", programs)
	}
	if len(got) != len(aus) {
		t.Fatalf("demuxed %d units, want %d", len(got), len(aus))
	}
	last := map[int]int64{}
	for i, au := range got {
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d, track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		if au.PTS < au.DTS {
			t.Fatalf("unit %d: PTS %d before DTS %d", i, au.PTS, au.DTS)
		}
		last[au.Track] = au.DTS
	}
}

// TestRemuxerRepairs: a step back within a track is moved one tick past the last DTS, and a
// unit of a track the output does not have is skipped.
func TestRemuxerRepairs(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	r, err := NewRemuxer(tracks, &trackSource{tracks})
	if err != nil {
		t.Fatal(err)
	}
	audio := func(pts, dts int64) *media.AccessUnit {
		return &media.AccessUnit{Track: 1, Key: true, PTS: pts, DTS: dts, Payload: [][]byte{{0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c}}}
	}
	cases := []struct {
		au      *media.AccessUnit
		wantDTS int64 // at 90 kHz
	}{
		{audio(48000, 48000), 90000},
		{audio(47000, 47000), media.Rescale(48001, 48000, 90000)},
		{audio(49024, 49024), media.Rescale(49024, 48000, 90000)},
	}
	for i, c := range cases {
		_, dts, ok, err := r.AppendAccessUnit(nil, c.au)
		if err != nil || !ok {
			t.Fatalf("unit %d: ok %v, %v", i, ok, err)
		}
		if dts != c.wantDTS {
			t.Errorf("unit %d: DTS %d at 90 kHz, want %d", i, dts, c.wantDTS)
		}
	}
	for _, track := range []int{-1, 2} {
		dst := []byte("kept")
		out, _, ok, err := r.AppendAccessUnit(dst, &media.AccessUnit{Track: track, Payload: [][]byte{{1}}})
		if err != nil || ok || string(out) != "kept" {
			t.Errorf("track %d: ok %v, err %v, %d bytes; want skipped", track, ok, err, len(out))
		}
	}
}

// TestRemuxerTracksChange: tracks that mux differently at a discontinuity rebuild the muxer,
// so the receiver reads a new program; the same tracks at a discontinuity do not.
func TestRemuxerTracksChange(t *testing.T) {
	a := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	b := mediatest.WithIDs(mediatest.H265(0))
	src := &trackSource{a}
	r, err := NewRemuxer(a, src)
	if err != nil {
		t.Fatal(err)
	}
	var changed [][]media.Track
	r.OnTracks = func(tracks []media.Track) { changed = append(changed, tracks) }
	first, _ := remuxAll(t, r, mediatest.Synth(a, 0.5, 0, 25, false))

	again := mediatest.Synth(a, 0.5, 0, 25, false)
	again[0].Discontinuity = true
	second, _ := remuxAll(t, r, again)
	if len(changed) != 0 {
		t.Fatalf("OnTracks called %d times for the same tracks", len(changed))
	}

	src.tracks = b
	next := mediatest.Synth(b, 0.5, 0, 25, false)
	next[0].Discontinuity = true
	third, _ := remuxAll(t, r, next)
	if len(changed) != 1 || len(changed[0]) != 1 || changed[0][0].Codec != media.CodecH265 {
		t.Fatalf("OnTracks calls %v, want one with the H.265 track", changed)
	}
	if _, programs := demuxAll(t, append(append(first, second...), third...)); programs != 2 {
		t.Errorf("%d programs, want 2", programs)
	}
	d := NewDemuxer(bytes.NewReader(third))
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatalf("Tracks of the new program: %v", err)
	}
	mediatest.CheckTracks(t, tracks, b)

	// A unit of a track the new program lacks is skipped.
	if _, _, ok, err := r.AppendAccessUnit(nil, &media.AccessUnit{Track: 1, Payload: [][]byte{{1}}}); ok || err != nil {
		t.Errorf("unit of a gone track: ok %v, %v", ok, err)
	}
}

// TestRemuxerBadTracks: tracks the muxer cannot carry fail NewRemuxer, and fail a unit at the
// discontinuity that brings them.
func TestRemuxerBadTracks(t *testing.T) {
	bad := []media.Track{{Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{AudioConfig: []byte{0xff}}}}
	if _, err := NewRemuxer(bad, &trackSource{bad}); err == nil {
		t.Error("NewRemuxer with a bad AAC configuration: no error")
	}
	tracks := mediatest.WithIDs(mediatest.AAC(0))
	src := &trackSource{tracks}
	r, err := NewRemuxer(tracks, src)
	if err != nil {
		t.Fatal(err)
	}
	src.tracks = bad
	au := &media.AccessUnit{Track: 0, Key: true, Discontinuity: true, Payload: [][]byte{{1}}}
	if _, _, ok, err := r.AppendAccessUnit(nil, au); err == nil || ok {
		t.Errorf("unit bringing bad tracks: ok %v, %v; want an error", ok, err)
	}
}

func TestRemuxerNoAllocs(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 2, 0, 25, true)
	r, err := NewRemuxer(tracks, &trackSource{tracks})
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, au := range aus { // grow the buffers
		if buf, _, _, err = r.AppendAccessUnit(buf[:0], au); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		buf, _, _, _ = r.AppendAccessUnit(buf[:0], aus[i%len(aus)])
		i++
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per access unit, want 0", allocs)
	}
}
