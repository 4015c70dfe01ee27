package hls

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// TestPullCaps: a playlist or a segment over its cap ends the pull with an error that names
// the URL and the cap.
func TestPullCaps(t *testing.T) {
	const media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n" +
		"#EXTINF:1.0,\nseg0.ts\n#EXTINF:1.0,\nseg1.ts\n#EXT-X-ENDLIST\n"
	srv := pulltest.CapServer(t, map[string]string{
		"/big.m3u8":   "#EXTM3U\n" + strings.Repeat("#EXT-X-COMMENT\n", 100),
		"/media.m3u8": media,
	})
	cfg := defaultConfig
	cfg.maxPlaylist, cfg.maxSegment = 1000, 5000
	pulltest.CheckCaps(t, func(url string) error {
		return pull(context.Background(), url, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
	}, srv.URL, errTooLarge, []pulltest.CapCase{
		{Path: "/big.m3u8", Where: "hls pull " + srv.URL + "/big.m3u8: playlist: ", Want: "over the cap of 1000 bytes"},
		{Path: "/media.m3u8", Where: "segment " + srv.URL + "/seg0.ts: ", Want: "over the cap of 5000 bytes"},
	})
}
