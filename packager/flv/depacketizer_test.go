package flv

import (
	"errors"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

func TestDepacketizerProbe(t *testing.T) {
	tracks := []media.Track{mediatest.H264(0), mediatest.AAC(1)}
	tags := toTags(t, tracks, mediatest.Synth(tracks, 3, 0, 25, true))
	video := func(tags []Tag) (out []Tag) {
		for _, tag := range tags {
			if tag.Type == TagVideo {
				out = append(out, tag)
			}
		}
		return out
	}(tags)

	t.Run("video only without hints waits for the probe window", func(t *testing.T) {
		d := NewDepacketizer()
		got, aus := depacketize(t, d, video)
		if len(got) != 1 || got[0].Codec != media.CodecH264 || len(aus) != 75 {
			t.Errorf("tracks %+v, %d units; want H.264 and 75 units", got, len(aus))
		}
	})
	t.Run("expected video only is announced at once", func(t *testing.T) {
		d := NewDepacketizer()
		d.Expect(true, false)
		if err := d.Push(video[0]); err != nil {
			t.Fatal(err)
		}
		if got := d.Tracks(); len(got) != 1 {
			t.Errorf("tracks after the sequence header: %+v", got)
		}
	})
	t.Run("audio announced but silent", func(t *testing.T) {
		d := NewDepacketizer()
		d.Expect(true, true)
		got, aus := depacketize(t, d, video)
		if len(got) != 1 || len(aus) != 75 {
			t.Errorf("tracks %+v, %d units; want the video track and 75 units", got, len(aus))
		}
	})
}

func TestDepacketizerInBandParams(t *testing.T) {
	// No sequence header: the parameter sets come with the key frames.
	tracks := []media.Track{mediatest.H264(0)}
	aus := mediatest.Synth(tracks, 2, 0, 25, true)
	tags := toTags(t, tracks, aus)[1:]
	d := NewDepacketizer()
	d.Expect(true, false)
	got, units := depacketize(t, d, tags)
	mediatest.CheckTracks(t, got, tracks)
	// Units before the second key frame with parameter sets are dropped: the second key
	// frame (unit 25) has none in band, but they are known by then.
	mediatest.CheckUnits(t, tracks, units, aus)
}

// TestDepacketizerMidGOP: a stream cut in the middle of a GOP goes on whole (the stream's
// publisher is the one key-frame gate); the first unit marked key is the first key frame.
func TestDepacketizerMidGOP(t *testing.T) {
	tracks := []media.Track{mediatest.H264(0)}
	aus := mediatest.Synth(tracks, 2, 0, 25, true)
	tags := toTags(t, tracks, aus)
	tags = append(tags[:1], tags[6:]...) // the sequence header, then frame 5 onwards
	d := NewDepacketizer()
	d.Expect(true, false)
	_, units := depacketize(t, d, tags)
	first := slices.IndexFunc(units, func(au *media.AccessUnit) bool { return au.Key })
	if len(units) != 45 || first != 20 || d.Dropped() != 0 {
		t.Errorf("%d units (first key at %d), %d dropped; want 45, the first key at 20, none dropped", len(units), first, d.Dropped())
	}
}

func TestDepacketizerAudioJitter(t *testing.T) {
	// Millisecond timestamps that wobble around 1024-sample frames give exact sample times.
	d := NewDepacketizer()
	d.Expect(false, true)
	if err := d.Push(Tag{Type: TagAudio, Body: []byte{0xaf, 0, 0x11, 0x90}}); err != nil {
		t.Fatal(err)
	}
	for i, ms := range []uint32{1000, 1022, 1042, 1065, 1086, 1106, 1130} {
		if err := d.Push(Tag{Type: TagAudio, Timestamp: ms, Body: []byte{0xaf, 1, 0x21}}); err != nil {
			t.Fatal(err)
		}
		au := d.Next()
		if want := int64(48000 + 1024*i); au == nil || au.PTS != want || au.DTS != want {
			t.Fatalf("frame %d at %d ms: %+v, want PTS %d", i, ms, au, want)
		}
	}
	// A real gap is kept.
	if err := d.Push(Tag{Type: TagAudio, Timestamp: 1500, Body: []byte{0xaf, 1, 0x21}}); err != nil {
		t.Fatal(err)
	}
	if au := d.Next(); au.PTS != 72000 {
		t.Errorf("after a gap: PTS %d, want 72000", au.PTS)
	}
}

func TestDepacketizerCodecChange(t *testing.T) {
	d := NewDepacketizer()
	d.Expect(true, false)
	tags := toTags(t, []media.Track{mediatest.H264(0)}, nil)
	if err := d.Push(tags[0]); err != nil {
		t.Fatal(err)
	}
	err := d.Push(Tag{Type: TagVideo, Body: hevcSeq})
	if !errors.Is(err, ErrCodecChanged) {
		t.Errorf("H.265 after H.264: %v, want ErrCodecChanged", err)
	}
}

func TestDepacketizerIgnores(t *testing.T) {
	d := NewDepacketizer()
	for _, tag := range []Tag{
		{Type: TagScript, Body: newFileMeta([]media.Track{mediatest.H264(0)}).body},
		{Type: TagVideo, Body: []byte{frameTypeCommand<<4 | videoCodecAVC, 0}},
		{Type: TagAudio, Body: []byte{0xaf, 1, 0x21}}, // AAC before its sequence header
	} {
		if err := d.Push(tag); err != nil {
			t.Errorf("tag type %d: %v", tag.Type, err)
		}
	}
	if d.Tracks() != nil || d.Next() != nil {
		t.Errorf("tracks or units from tags that configure nothing")
	}
}
