package dash

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// startLive has ffmpeg write a live DASH presentation (SegmentTimeline or $Number$ addressing)
// into a served folder and Pull play it into a Stream.
func startLive(t *testing.T, codec string, timeline bool) *pulltest.Live {
	t.Helper()
	return pulltest.StartLive(t, pullURL, "dash-test", codec, dashArgs(timeline), "index.mpd")
}

// checkLive asserts the tracks, the units and the bitrate against the source.
func checkLive(t *testing.T, r *pulltest.Live, video media.Codec) {
	t.Helper()
	r.Check(t, video, func() float64 { return sourceKbps(t, r.Dir) })
}

// TestPullTimelineEnd plays a live SegmentTimeline presentation; then the encoder stops, the
// MPD turns static, and Pull returns nil, leaving no goroutine or descriptor behind.
func TestPullTimelineEnd(t *testing.T) {
	r := startLive(t, "libx264", true)
	checkLive(t, r, media.CodecH264)
	stopped := time.Now()
	r.FF.Stop()
	mpd, _ := os.ReadFile(filepath.Join(r.Dir, "index.mpd"))
	if !strings.Contains(string(mpd), `type="static"`) {
		// ffmpeg did not finish within testutil's grace period and was killed: its MPD never
		// ended, so the pull can only stall.
		t.Fatalf("ffmpeg stopped after %v (%v) without making the MPD static", time.Since(stopped), r.FF.Wait(0))
	}
	r.CheckEnded(t, "the presentation ended")
}

// TestPullNumberServerGone plays a live $Number$ presentation without a timeline (segments
// computed from availabilityStartTime); then the server goes away: Pull fails with a stall
// and leaves nothing behind.
func TestPullNumberServerGone(t *testing.T) {
	r := startLive(t, "libx264", false)
	checkLive(t, r, media.CodecH264)
	r.CheckServerGone(t, httpget.ErrStalled)
}

// TestPullH265 plays live H.265 (hvc1) with a SegmentTimeline.
func TestPullH265(t *testing.T) {
	t.Parallel()
	r := startLive(t, "libx265", true)
	checkLive(t, r, media.CodecH265)
	if p := r.S.Tracks()[0].Params; len(p.VPS) == 0 {
		t.Fatal("H.265 track without VPS")
	}
}

// pullURL is Pull as the shared pull checks call it.
func pullURL(ctx context.Context, url string, s *stream.Stream, log *slog.Logger) error {
	return Pull(ctx, s, PullOptions{URL: url, Log: log})
}
