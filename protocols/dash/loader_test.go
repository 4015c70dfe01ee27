package dash

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
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
	srv := pulltest.CapServer(t, map[string]string{
		"/big.mpd":   mpd + strings.Repeat("<!-- padding -->\n", 100),
		"/index.mpd": mpd,
	})
	cfg := defaultConfig
	cfg.maxPlaylist, cfg.maxSegment = 1000, 5000
	pulltest.CheckCaps(t, func(url string) error {
		return pull(context.Background(), url, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
	}, srv.URL, errTooLarge, []pulltest.CapCase{
		{Path: "/big.mpd", Where: "dash pull " + srv.URL + "/big.mpd: MPD: ", Want: "over the cap of 1000 bytes"},
		{Path: "/index.mpd", Where: "segment " + srv.URL + "/init.mp4: ", Want: "over the cap of 5000 bytes"},
	})
}
