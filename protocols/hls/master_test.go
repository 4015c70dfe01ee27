package hls

import (
	"errors"
	"testing"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"
)

// TestPickVariant chooses the highest supported BANDWIDTH and the variant's audio rendition.
func TestPickVariant(t *testing.T) {
	cases := []struct {
		name, m3u8   string
		uri, audio   string
		noVariantErr bool
	}{
		{"ffmpeg var_stream_map", playlistSeeds[3], "stream_0.m3u8", "", false},
		{"default audio over autoselect", playlistSeeds[4], "v.m3u8", "fr.m3u8", false},
		{"only unsupported", playlistSeeds[5], "", "", true},
		{"unsupported is skipped", "#EXTM3U\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=9000000,CODECS=\"av01.0.08M.08\"\nav1.m3u8\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS=\"avc1.4d401f,mp4a.40.2\"\nlow.m3u8\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=2000000,CODECS=\"avc1.4d401f,mp4a.40.2\"\nhigh.m3u8\n", "high.m3u8", "", false},
		{"tie keeps the first; no CODECS is tried", "#EXTM3U\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=1000\na.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nb.m3u8\n", "a.m3u8", "", false},
		{"audio muxed in the variant", "#EXTM3U\n" +
			`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="main",DEFAULT=YES` + "\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=1000,AUDIO=\"a\"\nv.m3u8\n", "v.m3u8", "", false},
	}
	for _, tc := range cases {
		pl, err := parsePlaylist([]byte(tc.m3u8))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mv, ok := pl.(*playlist.Multivariant)
		if !ok {
			t.Fatalf("%s: %T", tc.name, pl)
		}
		c, err := pickVariant(mv)
		if tc.noVariantErr {
			if !errors.Is(err, errNoVariant) {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err != nil || c.variant.URI != tc.uri || c.audio != tc.audio {
			t.Errorf("%s: %+v %q %v", tc.name, c.variant, c.audio, err)
		}
	}
}
