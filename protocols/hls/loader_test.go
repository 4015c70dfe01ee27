package hls

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
)

// TestPullCaps: a playlist or a segment over its cap ends the pull with an error that names
// the URL and the cap.
func TestPullCaps(t *testing.T) {
	const media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n" +
		"#EXTINF:1.0,\nseg0.ts\n#EXTINF:1.0,\nseg1.ts\n#EXT-X-ENDLIST\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.m3u8":
			_, _ = w.Write([]byte("#EXTM3U\n" + strings.Repeat("#EXT-X-COMMENT\n", 100)))
		case "/media.m3u8":
			_, _ = w.Write([]byte(media))
		default:
			_, _ = w.Write(make([]byte, 6000))
		}
	}))
	defer srv.Close()
	cfg := defaultConfig
	cfg.MaxPlaylist, cfg.MaxSegment = 1000, 5000
	for _, tc := range []struct{ path, where, want string }{
		{"/big.m3u8", "hls pull " + srv.URL + "/big.m3u8: playlist: ", "over the cap of 1000 bytes"},
		{"/media.m3u8", "segment " + srv.URL + "/seg0.ts: ", "over the cap of 5000 bytes"},
	} {
		err := pull(context.Background(), srv.URL+tc.path, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errTooLarge) {
			t.Errorf("%s: %v, want an error with %q and %q", tc.path, err, tc.where, tc.want)
		}
	}
}
