package dash_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestDashJSPlays plays a live stream (ffmpeg in real time → segmenter → store) with dash.js
// in headless Chromium, across an input gap (a new Period).
func TestDashJSPlays(t *testing.T) {
	segtest.CheckPlaysAcrossGap(t, "dash", func(st *segment.Store) http.Handler {
		return dash.New(st, dash.Options{Live: segment.Live{ID: "live", FragmentSize: 2 * time.Second, Window: 30 * time.Second}})
	}, "/hls/live/live/index.mpd")
}
