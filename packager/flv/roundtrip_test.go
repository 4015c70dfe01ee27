package flv

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/nal"
)

// toTags packetizes units into tags with their own bodies, sequence headers first.
func toTags(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) []Tag {
	t.Helper()
	p, err := NewPacketizer(tracks)
	if err != nil {
		t.Fatalf("NewPacketizer: %v", err)
	}
	var ts uint32
	if len(aus) > 0 {
		trk := tracks[aus[0].Track]
		ts = uint32(media.Rescale(aus[0].DTS, trk.ClockRate, 1000))
	}
	tags, err := p.SequenceHeaders(ts)
	if err != nil {
		t.Fatalf("SequenceHeaders: %v", err)
	}
	for _, au := range aus {
		tag, err := p.Packetize(au)
		if err != nil {
			t.Fatalf("Packetize: %v", err)
		}
		tag.Body = bytes.Clone(tag.Body)
		tags = append(tags, tag)
	}
	return tags
}

// depacketize pushes tags and returns the tracks and units.
func depacketize(t testing.TB, d *Depacketizer, tags []Tag) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	var out []*media.AccessUnit
	for i, tag := range tags {
		if err := d.Push(tag); err != nil {
			t.Fatalf("Push tag %d (type %d): %v", i, tag.Type, err)
		}
		for au := d.Next(); au != nil; au = d.Next() {
			out = append(out, au)
		}
	}
	return d.Tracks(), out
}

// expectedPayload is what the depacketizer gives back: key frames get the parameter sets
// they lack.
func expectedPayload(trk media.Track, au *media.AccessUnit) [][]byte {
	if !au.Key || !trk.Codec.IsVideo() {
		return au.Payload
	}
	var has [8]bool
	for _, n := range au.Payload {
		has[nal.Classify(trk.Codec, n)] = true
	}
	var out [][]byte
	if trk.Codec == media.CodecH265 && !has[nal.VPS] {
		out = append(out, trk.Params.VPS)
	}
	if !has[nal.SPS] {
		out = append(out, trk.Params.SPS)
	}
	if !has[nal.PPS] {
		out = append(out, trk.Params.PPS)
	}
	return append(out, au.Payload...)
}

func checkTracks(t *testing.T, got, want []media.Track) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tracks, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		gp, wp := g.Params, w.Params
		if g.ID != w.ID || g.Codec != w.Codec || g.ClockRate != w.ClockRate ||
			!bytes.Equal(gp.VPS, wp.VPS) || !bytes.Equal(gp.SPS, wp.SPS) || !bytes.Equal(gp.PPS, wp.PPS) ||
			!bytes.Equal(gp.AudioConfig, wp.AudioConfig) || gp.Width != wp.Width || gp.Height != wp.Height ||
			gp.SampleRate != wp.SampleRate || gp.Channels != wp.Channels {
			t.Errorf("track %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func checkUnits(t *testing.T, tracks []media.Track, got, want []*media.AccessUnit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d units, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Track != w.Track || g.PTS != w.PTS || g.DTS != w.DTS || g.Key != w.Key {
			t.Fatalf("unit %d: got track %d pts %d dts %d key %v, want track %d pts %d dts %d key %v",
				i, g.Track, g.PTS, g.DTS, g.Key, w.Track, w.PTS, w.DTS, w.Key)
		}
		if wp := expectedPayload(tracks[w.Track], w); !slices.EqualFunc(g.Payload, wp, bytes.Equal) {
			t.Fatalf("unit %d (track %d, key %v): %d payload parts differ from the %d written", i, w.Track, w.Key, len(g.Payload), len(wp))
		}
	}
}

var roundTripCases = []struct {
	name   string
	tracks []media.Track
	start  int64
}{
	{"h264+aac", []media.Track{mediatest.H264(0), mediatest.AAC(1)}, 10 * 90000},
	{"h265+aac", []media.Track{mediatest.H265(0), mediatest.AAC(1)}, 0},
	{"h264+mp3", []media.Track{mediatest.H264(0), mediatest.MP3(1)}, 90000},
	{"h265 only", []media.Track{mediatest.H265(0)}, 0},
	{"h264+aac across the 32-bit millisecond wrap", []media.Track{mediatest.H264(0), mediatest.AAC(1)}, (1<<32 - 2000) * 90},
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			aus := mediatest.Synth(tc.tracks, 3, tc.start, 25, true)
			d := NewDepacketizer()
			if len(tc.tracks) == 1 {
				d.Expect(true, false)
			}
			tracks, got := depacketize(t, d, toTags(t, tc.tracks, aus))
			checkTracks(t, tracks, tc.tracks)
			checkUnits(t, tc.tracks, got, aus)
			if n := d.Dropped(); n != 0 {
				t.Errorf("%d units dropped", n)
			}
		})
	}
}
