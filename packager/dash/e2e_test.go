package dash_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestFFprobeReadsDASH packages real clips (H.264 + AAC, H.265 + AAC), serves the MPD over
// HTTP and lets ffprobe find the codecs and size.
func TestFFprobeReadsDASH(t *testing.T) {
	for _, tc := range []struct{ codec, probeName string }{{"h264", "h264"}, {"h265", "hevc"}} {
		t.Run(tc.codec, func(t *testing.T) {
			srv := segtest.ServeClip(t, tc.codec, func(st *segment.Store) http.Handler {
				return dash.New(st, dash.Options{Live: segment.Live{ID: "e2e", FragmentSize: 2 * time.Second}})
			})
			segtest.CheckProbe(t, srv.URL+"/hls/e2e/e2e/index.mpd", tc.probeName, "aac")
		})
	}
}
