package mpegts

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/nal"
)

// expectedPayload is what the demuxer gives back: key frames get the parameter sets they lack.
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

// readAll returns every unit until the reader's end.
func readAll(t *testing.T, d *Demuxer) []*media.AccessUnit {
	t.Helper()
	var out []*media.AccessUnit
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Read after %d units: %v", len(out), err)
		}
		out = append(out, au)
	}
}

func checkTracks(t *testing.T, got, want []media.Track) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tracks, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Codec != w.Codec || g.ClockRate != w.ClockRate {
			t.Errorf("track %d: got %v id %d clock %d, want %v id %d clock %d", i, g.Codec, g.ID, g.ClockRate, w.Codec, w.ID, w.ClockRate)
		}
		gp, wp := g.Params, w.Params
		if !bytes.Equal(gp.VPS, wp.VPS) || !bytes.Equal(gp.SPS, wp.SPS) || !bytes.Equal(gp.PPS, wp.PPS) ||
			!bytes.Equal(gp.AudioConfig, wp.AudioConfig) || gp.Width != wp.Width || gp.Height != wp.Height ||
			gp.SampleRate != wp.SampleRate || gp.Channels != wp.Channels {
			t.Errorf("track %d params:\n got %+v\nwant %+v", i, gp, wp)
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
			t.Fatalf("unit %d (track %d, key %v): payload of %d parts differs from the %d written", i, w.Track, w.Key, len(g.Payload), len(wp))
		}
	}
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
			checkTracks(t, tracks, tc.tracks)
			checkUnits(t, tc.tracks, readAll(t, d), aus)
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
	drain := func() {
		for {
			au, err := d.Read()
			if errors.Is(err, ErrNeedMore) {
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got = append(got, au)
		}
	}
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
	checkTracks(t, got2, tracks)
	checkUnits(t, tracks, got, aus)
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
