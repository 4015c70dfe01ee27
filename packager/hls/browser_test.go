package hls_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/browser"
	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestHLSJSPlays plays a live stream (ffmpeg in real time → segmenter → store) with hls.js
// in headless Chromium, across an input gap (EXT-X-DISCONTINUITY).
func TestHLSJSPlays(t *testing.T) {
	browser.Require(t)
	st := segment.NewStore(segment.StoreOptions{Window: 30 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
	srv := httptest.NewServer(hls.New(st, hls.Options{ID: "live", FragmentSize: 2 * time.Second, Window: 30 * time.Second}))
	defer srv.Close()
	segtest.Live(t, segtest.LiveOptions{Sessions: 2, SessionLength: 12 * time.Second, Gap: 2 * time.Second}, sg)
	waitSegments(t, st, 3)
	res := segtest.Play(t, "hls", srv.URL+"/hls/live/live/index.m3u8", 20*time.Second)
	t.Logf("%s; warnings %q", res, res.Warnings)
	if !res.OK || res.PlayedSeconds < 12 || res.Decoded.Width != segtest.ClipWidth || res.Decoded.AudioBytes == 0 {
		t.Fatalf("hls.js playback failed: %s\nwarnings %q\nconsole %q", res, res.Warnings, res.Console)
	}
	if discs := st.Snapshot().Newest().DiscSeq; discs != 1 {
		t.Errorf("%d discontinuities during playback, want 1", discs)
	}
}

// waitSegments waits until the store made n segments.
func waitSegments(t *testing.T, st *segment.Store, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for st.Snapshot().Added < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d segments from the live source, want %d", st.Snapshot().Added, n)
		}
		select {
		case <-st.Wait():
		case <-time.After(time.Second):
		}
	}
}
