package rtsp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/packager/nal"
)

// An H.264 SPS and PPS of a 64x64 picture, from libx264.
var (
	testSPS = []byte{0x67, 0x64, 0x00, 0x0a, 0xac, 0xd9, 0x44, 0x26, 0xc0, 0x44, 0x00, 0x00, 0x03, 0x00,
		0x04, 0x00, 0x00, 0x03, 0x00, 0xc8, 0x3c, 0x48, 0x96, 0x58}
	testPPS = []byte{0x68, 0xeb, 0xe3, 0xcb, 0x22, 0xc0}
)

// fixture is a file of testdata read into tracks and units with their original timestamps.
type fixture struct {
	tracks []media.Track
	units  []*media.AccessUnit
}

func readFixture(t testing.TB, name string) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d := mpegts.NewDemuxer(bytes.NewReader(b))
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{tracks: tracks}
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			return f
		}
		if err != nil {
			t.Fatal(err)
		}
		f.units = append(f.units, au)
	}
}

// rtpSession packetises a fixture as Push does and returns the packets in order, with the
// arrival time of each (the unit's DTS as wall-clock time).
type rtpPacket struct {
	track int
	pkt   *rtp.Packet
	at    time.Time
}

func packetise(t testing.TB, f fixture) ([]format.Format, []rtpPacket) {
	t.Helper()
	var formats []format.Format
	var outs []*outTrack
	for i, tr := range f.tracks {
		o, err := newOutTrack(tr, uint8(96+i))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
		formats = append(formats, o.media.Formats[0])
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var pkts []rtpPacket
	for _, au := range f.units {
		o := outs[au.Track]
		ps, err := o.packets(au, au.PTS)
		if err != nil {
			t.Fatal(err)
		}
		at := t0.Add(time.Duration(media.Rescale(au.DTS, o.clock, 1e6)) * time.Microsecond)
		for _, p := range ps {
			// Through the wire format: the ingest must not rely on the encoder's slices.
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var q rtp.Packet
			if err := q.Unmarshal(b); err != nil {
				t.Fatal(err)
			}
			pkts = append(pkts, rtpPacket{track: au.Track, pkt: &q, at: at})
		}
	}
	return formats, pkts
}

// publishIngest returns a new ingest of formats publishing into strm.
func publishIngest(t testing.TB, strm *stream.Stream, formats []format.Format, log *slog.Logger) *ingest {
	t.Helper()
	var tracks []*inTrack
	for _, f := range formats {
		tr, err := newInTrack(f)
		if err != nil {
			t.Fatal(err)
		}
		tracks = append(tracks, tr)
	}
	pub, err := strm.Publish()
	if err != nil {
		t.Fatal(err)
	}
	return newIngest(pub, tracks, log)
}

// ingestAll feeds packets to a new ingest of formats publishing into a new Stream, and returns
// the Stream's tracks and units.
func ingestAll(t testing.TB, formats []format.Format, pkts []rtpPacket) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	strm := stream.New("ingest", stream.Options{Log: testLog(t), QueueSize: 1 << 14})
	defer strm.Close()
	r, err := strm.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in := publishIngest(t, strm, formats, testLog(t))
	var now time.Time
	in.now = func() time.Time { return now }
	for _, p := range pkts {
		now = p.at
		in.onPacket(p.track, p.pkt)
	}
	gotTracks := strm.Tracks()
	in.close()
	var units []*media.AccessUnit
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	for {
		au, err := r.Read(ctx)
		if err != nil {
			return gotTracks, units
		}
		units = append(units, au)
	}
}

// TestIngestRoundTrip packetises fixtures with B-frames as Push does, ingests the packets and
// compares the units with the originals: payloads, presentation times up to a constant, and a
// rebuilt DTS that is increasing, at or before PTS and close to the original.
func TestIngestRoundTrip(t *testing.T) {
	for _, name := range []string{"h264_bframes_aac.ts", "h265_bframes_mp3.ts"} {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, name)
			formats, pkts := packetise(t, f)
			tracks, units := ingestAll(t, formats, pkts)
			if len(tracks) != len(f.tracks) {
				t.Fatalf("tracks = %+v, want %+v", tracks, f.tracks)
			}
			for i, tr := range tracks {
				want := f.tracks[i]
				if tr.Codec != want.Codec || tr.ClockRate != want.ClockRate || tr.Params.Width != want.Params.Width ||
					tr.Params.Height != want.Params.Height || tr.Params.SampleRate != want.Params.SampleRate ||
					tr.Params.Channels != want.Params.Channels {
					t.Errorf("track %d = %+v, want %+v", i, tr, want)
				}
			}
			orig := map[int][]*media.AccessUnit{}
			for _, au := range f.units {
				orig[au.Track] = append(orig[au.Track], au)
			}
			got := map[int][]*media.AccessUnit{}
			for _, au := range units {
				got[au.Track] = append(got[au.Track], au)
			}
			for tr, want := range orig {
				g := got[tr]
				if len(g) != len(want) {
					t.Errorf("track %d: %d units, want %d", tr, len(g), len(want))
					continue
				}
				offset := g[0].PTS - want[0].PTS
				frame := int64(3600)
				maxLag := int64(0)
				for i := range g {
					if g[i].PTS-want[i].PTS != offset {
						t.Errorf("track %d unit %d: PTS %d, want %d", tr, i, g[i].PTS, want[i].PTS+offset)
						break
					}
					if g[i].Key != want[i].Key {
						t.Errorf("track %d unit %d: key %v, want %v", tr, i, g[i].Key, want[i].Key)
					}
					if i > 0 && g[i].DTS <= g[i-1].DTS {
						t.Errorf("track %d unit %d: DTS %d after %d", tr, i, g[i].DTS, g[i-1].DTS)
					}
					if g[i].DTS > g[i].PTS {
						t.Errorf("track %d unit %d: DTS %d after PTS %d", tr, i, g[i].DTS, g[i].PTS)
					}
					if !tracks[tr].Codec.IsVideo() {
						if g[i].DTS != g[i].PTS {
							t.Errorf("audio unit %d: DTS %d, PTS %d", i, g[i].DTS, g[i].PTS)
						}
					} else {
						maxLag = max(maxLag, (g[i].DTS-offset)-want[i].DTS)
					}
					if !bytes.Equal(bytes.Join(g[i].Payload, nil), bytes.Join(want[i].Payload, nil)) {
						t.Errorf("track %d unit %d: payload differs", tr, i)
					}
				}
				if tracks[tr].Codec.IsVideo() {
					t.Logf("track %d: %d units; rebuilt DTS at most %d ticks after the original", tr, len(g), maxLag)
					if maxLag > 4*frame {
						t.Errorf("track %d: rebuilt DTS up to %d ticks after the original", tr, maxLag)
					}
				}
			}
		})
	}
}

// TestIngestInBandParams checks H.264 without parameter sets in the SDP: units wait for them,
// the first unit is a key frame, and the track is announced with them.
func TestIngestInBandParams(t *testing.T) {
	f := readFixture(t, "h264_bframes_aac.ts")
	formats, pkts := packetise(t, f)
	formats[0] = &format.H264{PayloadTyp: 96, PacketizationMode: 1}
	// Start in the middle of the first GOP, as a late publisher's packets would.
	var late []rtpPacket
	for i, p := range pkts {
		if i > len(pkts)/4 {
			late = append(late, p)
		}
	}
	tracks, units := ingestAll(t, formats, late)
	if len(tracks) != 2 || !bytes.Equal(tracks[0].Params.SPS, f.tracks[0].Params.SPS) ||
		tracks[0].Params.Width != 160 || tracks[0].Params.Height != 90 {
		t.Fatalf("tracks = %+v", tracks)
	}
	for _, au := range units {
		if au.Track == 0 {
			if !au.Key || !hasParamSets(media.CodecH264, au.Payload) {
				t.Errorf("first video unit: key %v, parameter sets %v", au.Key, hasParamSets(media.CodecH264, au.Payload))
			}
			break
		}
	}
}

func TestVideoTrackNormalises(t *testing.T) {
	aud := []byte{0x09, 0xf0}
	idr := []byte{0x65, 0x88, 0x84, 0x00}
	nonIDR := []byte{0x41, 0x9a, 0x02}
	cases := []struct {
		name    string
		sdp     bool // parameter sets given at creation
		units   [][][]byte
		wantKey []bool // per unit out (units before a key frame go on: the stream drops them)
		wantN   []int  // NAL units per unit out
	}{
		{"before the key frame", true, [][][]byte{{nonIDR}, {aud, idr}, {aud, nonIDR}},
			[]bool{false, true, false}, []int{1, 3, 1}},
		{"in-band params kept", false, [][][]byte{{idr}, {testSPS, testPPS, idr}, {nonIDR}, {idr}},
			[]bool{false, true, false, true}, []int{1, 3, 1, 3}},
		{"empty units", true, [][][]byte{{}, {aud}, {nil, idr}}, []bool{true}, []int{3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newVideoTrack(media.CodecH264, nil, nil, nil)
			if tc.sdp {
				v = newVideoTrack(media.CodecH264, nil, testSPS, testPPS)
			}
			var got []*media.AccessUnit
			for i, u := range tc.units {
				au, err := v.unit(u, int64(i)*3600)
				if err == nil {
					got = append(got, au)
				}
			}
			if len(got) != len(tc.wantKey) {
				t.Fatalf("%d units out, want %d", len(got), len(tc.wantKey))
			}
			for i, au := range got {
				if au.Key != tc.wantKey[i] || len(au.Payload) != tc.wantN[i] {
					t.Errorf("unit %d: key %v with %d NAL units, want %v with %d", i, au.Key, len(au.Payload), tc.wantKey[i], tc.wantN[i])
				}
				if au.Key && !hasParamSets(media.CodecH264, au.Payload) {
					t.Errorf("unit %d: key frame without parameter sets", i)
				}
				for _, n := range au.Payload {
					if nal.Classify(media.CodecH264, n) == nal.AUD {
						t.Errorf("unit %d: AUD kept", i)
					}
				}
			}
		})
	}
}

func TestSessionClock(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var s sessionClock
	var v, a rtpClock
	if got := s.decode(&v, 90000, 0xffff_ff00, t0); got != 0 {
		t.Errorf("first = %d, want 0", got)
	}
	// Wraps past 2^32.
	if got := s.decode(&v, 90000, 0x0000_0100, t0.Add(time.Millisecond)); got != 0x200 {
		t.Errorf("after wrap = %d, want %d", got, 0x200)
	}
	// A second track 1 s after the leading track's last packet starts 1 s after its timestamp.
	if got := s.decode(&a, 48000, 12345, t0.Add(time.Millisecond+time.Second)); got != media.Rescale(0x200, 90000, 48000)+48000 {
		t.Errorf("second track = %d, want %d", got, media.Rescale(0x200, 90000, 48000)+48000)
	}
	if got := s.decode(&a, 48000, 12345+1024, t0); got != media.Rescale(0x200, 90000, 48000)+48000+1024 {
		t.Errorf("second track's next = %d", got)
	}
	// Steps back are kept as such.
	if got := s.decode(&v, 90000, 0x0000_0000, t0); got != 0x100 {
		t.Errorf("step back = %d, want %d", got, 0x100)
	}
}
