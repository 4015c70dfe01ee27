package rtsp

import (
	"context"
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/stream"
)

// fuzzFormats are the formats FuzzIngest feeds: every carried codec, video without parameter
// sets in the SDP so that in-band ones are parsed.
func fuzzFormats() []format.Format {
	return []format.Format{
		&format.H264{PayloadTyp: 96, PacketizationMode: 1},
		&format.H265{PayloadTyp: 97},
		&format.MPEG4Audio{PayloadTyp: 98, Config: &mpeg4audio.AudioSpecificConfig{
			Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 48000, ChannelCount: 2}, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3},
		&format.MPEG1Audio{},
		&format.Opus{PayloadTyp: 99, ChannelCount: 2},
	}
}

// fuzzRecord appends one packet for track i to a fuzz input: track, length, RTP bytes.
func fuzzRecord(dst []byte, i int, pkt []byte) []byte {
	dst = append(dst, byte(i))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(pkt)))
	return append(dst, pkt...)
}

// fuzzSeeds are inputs made of the fixtures' packets, mapped onto fuzzFormats' tracks.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, fx := range []struct {
		name   string
		tracks []int
	}{{"h264_bframes_aac.ts", []int{0, 2}}, {"h265_bframes_mp3.ts", []int{1, 3}}} {
		_, pkts := packetise(t, readFixture(t, fx.name))
		// Small inputs: the fuzzer minimises every new one, and that takes time in proportion.
		var in []byte
		for i, p := range pkts {
			b, err := p.pkt.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			in = fuzzRecord(in, fx.tracks[p.track], b)
			if i == 15 || i == 60 {
				seeds = append(seeds, append([]byte(nil), in...))
			}
			if i == 60 {
				break
			}
		}
	}
	opus := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 99, Timestamp: 960}, Payload: []byte{0xfc, 1, 2, 3}}
	b, _ := opus.Marshal()
	seeds = append(seeds, fuzzRecord(nil, 4, b), fuzzRecord(fuzzRecord(nil, 4, b), 4, b))
	seeds = append(seeds, []byte{0, 0, 3, 0x80, 96, 0}, []byte{9, 0, 0})
	return seeds
}

// FuzzIngest feeds arbitrary RTP packets to the ingest of every codec and checks what reaches
// the Stream: no panic, DTS increasing per track, PTS at or after DTS, video starting at a key
// frame with parameter sets. Inputs are long (many packets): run it with a short
// -fuzzminimizetime (1s), or the fuzzer spends its time minimising each new input.
func FuzzIngest(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(fuzzOne)
}

// fuzzOne is one run of FuzzIngest.
func fuzzOne(t *testing.T, data []byte) {
	{
		log := slog.New(slog.DiscardHandler)
		strm := stream.New("fuzz", stream.Options{Log: log, QueueSize: 1 << 12})
		defer strm.Close()
		r, err := strm.NewReader("fuzz")
		if err != nil {
			t.Fatal(err)
		}
		formats := fuzzFormats()
		in := publishIngest(t, strm, formats, log)
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		in.now = func() time.Time { return now }
		for len(data) >= 3 {
			i := int(data[0]) % len(formats)
			n := int(binary.BigEndian.Uint16(data[1:3]))
			data = data[3:]
			n = min(n, len(data))
			var pkt rtp.Packet
			if pkt.Unmarshal(data[:n]) == nil {
				in.onPacket(i, &pkt)
			}
			data = data[n:]
			now = now.Add(time.Millisecond)
		}
		in.close()
		got := strm.Tracks()
		strm.Close() // the reader gets what it queued, then io.EOF
		last := map[int]int64{}
		seen := map[int]bool{}
		for {
			au, err := r.Read(context.Background())
			if err != nil {
				break
			}
			if au.Track < 0 || au.Track >= len(got) {
				t.Fatalf("unit of track %d with %d tracks", au.Track, len(got))
			}
			c := got[au.Track].Codec
			if seen[au.Track] && au.DTS <= last[au.Track] {
				t.Fatalf("track %d: DTS %d after %d", au.Track, au.DTS, last[au.Track])
			}
			if au.PTS < au.DTS {
				t.Fatalf("track %d: PTS %d before DTS %d", au.Track, au.PTS, au.DTS)
			}
			if c.IsVideo() && !seen[au.Track] && (!au.Key || !hasParamSets(c, au.Payload)) {
				t.Fatalf("track %d: first unit not a key frame with parameter sets", au.Track)
			}
			seen[au.Track], last[au.Track] = true, au.DTS
		}
		r.Close()
	}
}

// urlCases are table cases for parseURL, shared with FuzzParseURL's seeds.
var urlCases = []struct {
	in, want  string
	transport string // "", "tcp", "udp"
	err       bool
}{
	{"rtsp://host/live", "rtsp://host/live", "", false},
	{"rtsp://u:p@host:8554/live?rtsp_transport=tcp", "rtsp://u:p@host:8554/live", "tcp", false},
	{"rtsp://host/live?a=1&rtsp_transport=UDP&b=2", "rtsp://host/live?a=1&b=2", "udp", false},
	{"rtsp://host/live?rtsp_transport=auto", "rtsp://host/live", "", false},
	{"rtsp://host/live?rtsp%5Ftransport=tcp", "rtsp://host/live", "tcp", false},
	{"rtsps://host/live", "rtsps://host/live", "", false},
	{"rtsp://host/live?rtsp_transport=http", "", "", true},
	{"http://host/live", "", "", true},
	{"rtsp:///live", "", "", true},
	{"rtsp://host/live#x", "", "", true},
	{"rtsp://us%er:p%ss@host/live", "", "", true},
}

func TestParseURL(t *testing.T) {
	for _, tc := range urlCases {
		u, tr, err := parseURL(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("parseURL(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		gotTr := ""
		if tr != nil {
			gotTr = strings.ToLower(tr.String())
		}
		if u.String() != tc.want || gotTr != tc.transport {
			t.Errorf("parseURL(%q) = %s, %q; want %s, %q", tc.in, u, gotTr, tc.want, tc.transport)
		}
	}
	ep, err := newEndpoint("pull", "rtsp://user:secret@host/live?token=tok3n", nil)
	if err != nil || strings.Contains(ep.where, "secret") || strings.Contains(ep.where, "tok3n") || !strings.Contains(ep.where, "user@") {
		t.Errorf("newEndpoint: where %q, %v", ep.where, err)
	}
	if _, err := newEndpoint("pull", "rtsp://user:secret@host/live?rtsp_transport=x", nil); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("newEndpoint of a bad transport: %v", err)
	}
}

// FuzzParseURL checks that parseURL never panics and never lets the transport option through.
func FuzzParseURL(f *testing.F) {
	for _, tc := range urlCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, _, err := parseURL(s)
		_, _ = newEndpoint("pull", s, slog.New(slog.DiscardHandler))
		if err != nil {
			return
		}
		for _, kv := range strings.Split(u.RawQuery, "&") {
			if k, _, _ := strings.Cut(kv, "="); k == transportOption {
				t.Fatalf("parseURL(%q) kept %s: %s", s, transportOption, u)
			}
		}
	})
}
