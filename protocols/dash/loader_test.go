package dash

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

// TestPullCaps: an MPD or a segment over its cap ends the pull with an error that names the
// URL and the cap.
func TestPullCaps(t *testing.T) {
	const mpd = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" minBufferTime="PT2S">
	<Period id="0" start="PT0S">
		<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
			<SegmentTemplate timescale="1000" duration="1000" startNumber="1" initialization="init.mp4" media="seg$Number$.m4s"/>
			<Representation id="v" bandwidth="1000000" width="640" height="360"/>
		</AdaptationSet>
	</Period>
</MPD>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.mpd":
			_, _ = w.Write([]byte(mpd + strings.Repeat("<!-- padding -->\n", 100)))
		case "/index.mpd":
			_, _ = w.Write([]byte(mpd))
		default:
			_, _ = w.Write(make([]byte, 6000))
		}
	}))
	defer srv.Close()
	cfg := defaultConfig
	cfg.MaxPlaylist, cfg.MaxSegment = 1000, 5000
	for _, tc := range []struct{ path, where, want string }{
		{"/big.mpd", "dash pull " + srv.URL + "/big.mpd: MPD: ", "over the cap of 1000 bytes"},
		{"/index.mpd", "segment " + srv.URL + "/init.mp4: ", "over the cap of 5000 bytes"},
	} {
		err := pull(context.Background(), srv.URL+tc.path, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errTooLarge) {
			t.Errorf("%s: %v, want an error with %q and %q", tc.path, err, tc.where, tc.want)
		}
	}
}
