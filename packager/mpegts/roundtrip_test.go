package mpegts

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// readAll returns every unit until the reader's end.
func readAll(t *testing.T, d *Demuxer) []*media.AccessUnit {
	t.Helper()
	return readUntil(t, d, io.EOF)
}

var roundTripCases = []struct {
	name    string
	tracks  []media.Track
	start   int64
	reorder bool
}{
	{"h264+aac", mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0)), 10 * 90000, true},
	{"h265+opus", mediatest.WithIDs(mediatest.H265(0), mediatest.Opus(0)), 0, false},
	{"h265+aac", mediatest.WithIDs(mediatest.H265(0), mediatest.AAC(0)), 90000, true},
	{"mp3", mediatest.WithIDs(mediatest.MP3(0)), 90000, false},
	{"h264+mp3 across the 33-bit wrap", mediatest.WithIDs(mediatest.H264(0), mediatest.MP3(0)), 1<<33 - 90000, true},
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			aus := mediatest.Synth(tc.tracks, 3, tc.start, 25, tc.reorder)
			ts := muxAll(t, tc.tracks, aus)
			if len(ts)%PacketSize != 0 {
				t.Fatalf("muxer wrote %d bytes, not whole packets", len(ts))
			}
			d := NewDemuxer(bytes.NewReader(ts))
			tracks, err := d.Tracks()
			if err != nil {
				t.Fatalf("Tracks: %v", err)
			}
			mediatest.CheckTracks(t, tracks, tc.tracks)
			mediatest.CheckUnits(t, tc.tracks, readAll(t, d), aus)
			if s := d.Stats(); s != (Stats{}) {
				t.Errorf("stats on a clean stream: %+v", s)
			}
		})
	}
}

func TestPushMode(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 2, 0, 25, true)
	ts := muxAll(t, tracks, aus)
	d := NewDemuxer(nil)
	if _, err := d.Tracks(); !errors.Is(err, ErrNeedMore) {
		t.Fatalf("Tracks before any byte: %v, want ErrNeedMore", err)
	}
	var got []*media.AccessUnit
	drain := func() { got = append(got, readUntil(t, d, ErrNeedMore)...) }
	// Datagrams of 7 packets, then odd sizes that split packets.
	for i, sizes := 0, []int{7 * PacketSize, 1000, 1, 187, 189, 5000}; len(ts) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(ts))
		if _, err := d.Write(ts[:n]); err != nil {
			t.Fatal(err)
		}
		ts = ts[n:]
		drain()
	}
	d.Flush()
	drain()
	got2, err := d.Tracks()
	if err != nil {
		t.Fatal(err)
	}
	mediatest.CheckTracks(t, got2, tracks)
	mediatest.CheckUnits(t, tracks, got, aus)
}

func TestReadAll(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 2, 0, 50, true)
	ts := muxAll(t, tracks, aus)
	got, units, err := ReadAll(bytes.NewReader(ts))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(units) != len(aus) {
		t.Fatalf("%d tracks and %d units, want 2 and %d", len(got), len(units), len(aus))
	}
	if _, _, err := ReadAll(bytes.NewReader(ts[:100])); err == nil {
		t.Error("a cut stream without its tables read as whole")
	}
}
