package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// servedDir serves dir over HTTP for the duration of the test.
func servedDir(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHLSAndDASHPullInputs: ffmpeg writes live HLS (fMP4) and DASH into a folder a test HTTP
// server serves; a restream pulls each and reports the source's bitrate.
func TestHLSAndDASHPullInputs(t *testing.T) {
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	for _, sub := range []string{"hls", "dash"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "hls", "-hls_time", "1", "-hls_list_size", "6",
		"-hls_flags", "delete_segments", "-hls_segment_type", "fmp4", filepath.Join(dir, "hls", "index.m3u8"))...)
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "dash", "-seg_duration", "1", "-window_size", "6",
		"-use_template", "1", "-use_timeline", "1", "-streaming", "0", filepath.Join(dir, "dash", "index.mpd"))...)
	base := servedDir(t, dir)

	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	h := ts.create("restream", restreamBody("hls-pull", urlInput("INPUT_TYPE_HLS_URL", fmt.Sprintf("%s/hls/index.m3u8", base))))
	d := ts.create("restream", restreamBody("dash-pull", urlInput("INPUT_TYPE_MPEG_DASH_URL", fmt.Sprintf("%s/dash/index.mpd", base))))
	ts.checkBitrate("restream", h)
	ts.checkBitrate("restream", d)
}
