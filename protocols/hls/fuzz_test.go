package hls

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Playlists of the table tests, also the fuzz seeds.
var playlistSeeds = []string{
	"#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:7\n#EXTINF:2.0,\na.ts\n#EXTINF:2.0,\nb.ts\n#EXT-X-ENDLIST\n",
	"#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.0,\nseg0.m4s\n#EXT-X-DISCONTINUITY\n#EXTINF:2.0,\nseg1.m4s\n",
	"#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-BYTERANGE:1000@0\n#EXTINF:4,\nall.ts\n#EXT-X-BYTERANGE:1000\n#EXTINF:4,\nall.ts\n",
	"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1170400,RESOLUTION=640x360,CODECS=\"avc1.42c01e,mp4a.40.2\"\nstream_0.m3u8\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=400400,RESOLUTION=320x180,CODECS=\"avc1.42c00d,mp4a.40.2\"\nstream_1.m3u8\n",
	"#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",AUTOSELECT=YES,URI=\"en.m3u8\"\n" +
		"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"fr\",DEFAULT=YES,URI=\"fr.m3u8\"\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"hvc1.1.6.L93.B0,mp4a.40.2\",AUDIO=\"a\"\nv.m3u8\n",
	"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=9000000,CODECS=\"vp09.00.10.08\"\nvp9.m3u8\n",
}

// FuzzPlaylist feeds m3u8 text to the parser and the variant choice: no panic, and a chosen
// variant is one of the playlist's with supported codecs.
func FuzzPlaylist(f *testing.F) {
	for _, s := range playlistSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pl, err := parsePlaylist(b)
		if err != nil {
			return
		}
		switch p := pl.(type) {
		case *playlist.Multivariant:
			c, err := pickVariant(p)
			if err == nil && !supported(c.variant.Codecs) {
				t.Fatalf("chose %v", c.variant.Codecs)
			}
		case *playlist.Media:
			r := &rendition{cfg: defaultConfig, next: -1, edge: -1}
			r.take(p, segmentMaps(b))
			for _, seg := range p.Segments {
				_ = r.segmentRange(seg.URI, seg)
			}
		}
	})
}

// fixtureFile reads a file of a recorded fixture.
func fixtureFile(t testing.TB, kind, name string) []byte {
	b, err := os.ReadFile(filepath.Join(recorded(t, kind).dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzSegmentTS feeds two TS segments to one reader: no panic, units in range.
func FuzzSegmentTS(f *testing.F) {
	seg := fixtureFile(f, "ts", "seg0.ts")
	f.Add(seg[:min(len(seg), 64*188)], []byte{})
	f.Add(seg[:188*20], seg[188*20:188*60])
	f.Add([]byte{0x47, 0x40, 0x00, 0x10}, []byte{0x47})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		r := newTSReader()
		var tracks []media.Track
		for _, seg := range [][]byte{a, b} {
			tr, units, err := r.segment(seg)
			if err != nil {
				return
			}
			if tr != nil {
				tracks = tr
			}
			checkFuzzUnits(t, tracks, units)
		}
	})
}

// FuzzSegmentFMP4 feeds an init segment and a media segment to the fMP4 reader.
func FuzzSegmentFMP4(f *testing.F) {
	init := fixtureFile(f, "fmp4", "init.mp4")
	seg := fixtureFile(f, "fmp4", "seg0.m4s")
	f.Add(init, seg[:min(len(seg), 4096)])
	f.Add(init[:len(init)/2], seg[:64])
	f.Add([]byte{0, 0, 0, 8, 'f', 't', 'y', 'p'}, []byte{0, 0, 0, 8, 'm', 'o', 'o', 'f'})
	f.Fuzz(func(t *testing.T, init, seg []byte) {
		r, err := newFMP4Reader(init)
		if err != nil {
			return
		}
		tracks, units, err := r.segment(seg)
		if err != nil {
			return
		}
		if tracks == nil {
			t.Fatal("first segment announced no tracks")
		}
		checkFuzzUnits(t, tracks, units)
	})
}

func checkFuzzUnits(t *testing.T, tracks []media.Track, units []*media.AccessUnit) {
	for _, au := range units {
		if au.Track < 0 || au.Track >= len(tracks) {
			t.Fatalf("unit of track %d with %d tracks", au.Track, len(tracks))
		}
	}
}

// FuzzVideoFixer feeds NAL units to the H.264 and H.265 fixers: no panic, no AUD out, and a key
// frame leaves with its parameter sets once they are known.
func FuzzVideoFixer(f *testing.F) {
	f.Add(false, []byte{0x09, 0xf0}, []byte{0x67, 0x42, 0xc0, 0x1e, 0xd9, 0x00, 0xa0, 0x2f, 0xf9, 0x70, 0x11}, []byte{0x65, 0x88})
	f.Add(false, []byte{0x68, 0xce, 0x3c, 0x80}, []byte{0x41, 0x9a}, []byte{0x65, 0x88, 0x84})
	f.Add(true, []byte{0x40, 0x01, 0x0c}, []byte{0x42, 0x01, 0x01}, []byte{0x26, 0x01, 0xaf})
	f.Add(true, []byte{0x46, 0x01, 0x50}, []byte{0x44, 0x01, 0xc1}, []byte{0x02, 0x01, 0xd0})
	f.Fuzz(func(t *testing.T, h265 bool, a, b, c []byte) {
		codec := media.CodecH264
		if h265 {
			codec = media.CodecH265
		}
		v := nal.NewFixer(codec, nil, nil, nil)
		for range 2 {
			out, key, _ := v.Fix([][]byte{a, b, c})
			for _, n := range out {
				if len(n) == 0 {
					t.Fatal("empty NAL unit out")
				}
				if streamtest.IsAUD(codec, n) {
					t.Fatal("AUD out")
				}
			}
			if key && v.Ready() && !streamtest.HasParams(codec, out) {
				t.Fatal("key frame without parameter sets")
			}
			_ = v.Params()
		}
	})
}
