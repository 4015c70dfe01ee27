package dash_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestFFprobeReadsDASH packages real clips (H.264 + AAC, H.265 + AAC), serves the MPD over
// HTTP and lets ffprobe find the codecs and size.
func TestFFprobeReadsDASH(t *testing.T) {
	for _, tc := range []struct{ codec, probeName string }{{"h264", "h264"}, {"h265", "hevc"}} {
		t.Run(tc.codec, func(t *testing.T) {
			path := segtest.MakeTS(t, tc.codec)
			st := segment.NewStore(segment.StoreOptions{})
			sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
			segtest.FeedTS(t, path, time.Now().Add(-segtest.ClipSeconds*time.Second), sg)
			srv := httptest.NewServer(dash.New(st, dash.Options{ID: "e2e", FragmentSize: 2 * time.Second}))
			defer srv.Close()
			url := srv.URL + "/hls/e2e/e2e/index.mpd"

			p := testutil.FFprobe(t, url, false)
			var video, audio bool
			for _, s := range p.Streams {
				switch s.CodecType {
				case "video":
					video = s.CodecName == tc.probeName && s.Width == segtest.ClipWidth && s.Height == segtest.ClipHeight
				case "audio":
					audio = s.CodecName == "aac"
				}
			}
			if !video || !audio {
				t.Fatalf("ffprobe %s: %+v", url, p.Streams)
			}
		})
	}
}
