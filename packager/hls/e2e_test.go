package hls_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestFFmpegReadsHLS packages real clips (H.264 or H.265 with AAC, H.264 with MP3 or Opus),
// serves them over HTTP and lets ffprobe find the codecs and size, and ffmpeg copy 4 s out of
// the live playlist.
func TestFFmpegReadsHLS(t *testing.T) {
	for _, tc := range []struct{ codec, probeName, audio string }{
		{"h264", "h264", "aac"}, {"h265", "hevc", "aac"}, {"h264-mp3", "h264", "mp3"}, {"h264-opus", "h264", "opus"},
	} {
		t.Run(tc.codec, func(t *testing.T) {
			srv := segtest.ServeClip(t, tc.codec, func(st *segment.Store) http.Handler {
				return hls.New(st, hls.Options{Live: segment.Live{ID: "e2e", FragmentSize: 2 * time.Second}})
			})
			url := srv.URL + "/hls/e2e/e2e/index.m3u8"
			segtest.CheckProbe(t, url, tc.probeName, tc.audio)

			out := filepath.Join(t.TempDir(), "out.mp4")
			if err := testutil.FFmpeg(t, "-i", url, "-c", "copy", "-t", "4", out).Wait(2 * time.Minute); err != nil {
				t.Fatalf("ffmpeg -c copy: %v", err)
			}
			got := testutil.FFprobe(t, out, true)
			d, _ := strconv.ParseFloat(got.Format.Duration, 64)
			if len(got.Streams) != 2 || d < 3.5 || d > 4.5 {
				t.Errorf("copied file: %v s, %+v", d, got.Streams)
			}
		})
	}
}
