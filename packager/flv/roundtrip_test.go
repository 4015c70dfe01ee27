package flv

import (
	"bytes"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
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
			mediatest.CheckTracks(t, tracks, tc.tracks)
			mediatest.CheckUnits(t, tc.tracks, got, aus)
			if n := d.Dropped(); n != 0 {
				t.Errorf("%d units dropped", n)
			}
		})
	}
}
