package hls_test

import (
	"net/http/httptest"
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
			path := segtest.MakeTS(t, tc.codec)
			st := segment.NewStore(segment.StoreOptions{})
			sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
			segtest.FeedTS(t, path, time.Now().Add(-segtest.ClipSeconds*time.Second), sg)
			srv := httptest.NewServer(hls.New(st, hls.Options{ID: "e2e", FragmentSize: 2 * time.Second}))
			defer srv.Close()
			url := srv.URL + "/hls/e2e/e2e/index.m3u8"

			p := testutil.FFprobe(t, url, false)
			var video, audio bool
			for _, s := range p.Streams {
				switch s.CodecType {
				case "video":
					video = s.CodecName == tc.probeName && s.Width == segtest.ClipWidth && s.Height == segtest.ClipHeight
				case "audio":
					audio = s.CodecName == tc.audio
				}
			}
			if !video || !audio {
				t.Fatalf("ffprobe %s: %+v", url, p.Streams)
			}

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
