package dash

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// liveRun is one end-to-end run: ffmpeg writes a live DASH presentation into a served folder,
// Pull plays it into a Stream.
type liveRun struct {
	dir  string
	srv  *httptest.Server
	ff   *testutil.Process
	s    *stream.Stream
	col  *streamtest.Collector
	base testutil.Baseline
	done <-chan error
}

func startLive(t *testing.T, codec string, timeline bool) *liveRun {
	t.Helper()
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	srv := streamtest.Serve(t, dir)
	args := append(encodeArgs(codec), dashArgs(timeline)...)
	ff := testutil.FFmpeg(t, append(args, filepath.Join(dir, "index.mpd"))...)
	streamtest.WaitFile(t, filepath.Join(dir, "index.mpd"))
	r := &liveRun{dir: dir, srv: srv, ff: ff, s: stream.New("dash-test", stream.Options{})}
	r.col = streamtest.Collect(t, r.s)
	r.base = testutil.TakeBaseline()
	r.done = pullAsync(t, srv.URL+"/index.mpd", r.s)
	return r
}

// checkLive asserts the tracks, the units and the bitrate against the source.
func checkLive(t *testing.T, r *liveRun, video media.Codec) {
	t.Helper()
	tracks := streamtest.WaitTracks(t, r.s, 60*time.Second)
	if len(tracks) != 2 || tracks[0].Codec != video || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %v, want %v and AAC", ingest.Describe(tracks), video)
	}
	if p := tracks[0].Params; p.Width != srcWidth || p.Height != srcHeight || len(p.SPS) == 0 || len(p.PPS) == 0 {
		t.Fatalf("video params %dx%d sps %d pps %d", p.Width, p.Height, len(p.SPS), len(p.PPS))
	}
	if p := tracks[1].Params; tracks[1].ClockRate != 48000 || p.SampleRate != 48000 || len(p.AudioConfig) == 0 {
		t.Fatalf("audio track %+v", tracks[1])
	}
	testutil.Eventually(t, 30*time.Second, "media flows", func() bool {
		return r.s.Stats().UnitsIn > 200
	})
	time.Sleep(time.Second)
	got := streamtest.MeanBitrate(r.s, 6*time.Second)
	want := sourceKbps(t, r.dir)
	t.Logf("bitrate: stream %.0f kbit/s, source segments %.0f kbit/s (configured %d)", got, want, srcVideoKbps+srcAudioKbps)
	streamtest.Within(t, "stream bitrate vs source", got, want, 0.15)
	streamtest.CheckPulled(t, tracks, r.col.Snapshot())
}

// TestPullTimelineEnd plays a live SegmentTimeline presentation; then the encoder stops, the
// MPD turns static, and Pull returns nil, leaving no goroutine or descriptor behind.
func TestPullTimelineEnd(t *testing.T) {
	r := startLive(t, "libx264", true)
	checkLive(t, r, media.CodecH264)
	stopped := time.Now()
	r.ff.Stop()
	mpd, _ := os.ReadFile(filepath.Join(r.dir, "index.mpd"))
	if !strings.Contains(string(mpd), `type="static"`) {
		// ffmpeg did not finish within testutil's grace period and was killed: its MPD never
		// ended, so the pull can only stall.
		t.Fatalf("ffmpeg stopped after %v (%v) without making the MPD static", time.Since(stopped), r.ff.Wait(0))
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Pull after the presentation ended (%v after the encoder stopped): %v", time.Since(stopped), err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Pull did not return after the presentation ended")
	}
	streamtest.CheckPulled(t, r.s.Tracks(), r.col.Snapshot())
	r.col.Stop()
	r.base.Check(t, 20*time.Second)
}

// TestPullNumberServerGone plays a live $Number$ presentation without a timeline (segments
// computed from availabilityStartTime); then the server goes away: Pull fails with a stall
// and leaves nothing behind.
func TestPullNumberServerGone(t *testing.T) {
	r := startLive(t, "libx264", false)
	checkLive(t, r, media.CodecH264)
	gone := time.Now()
	r.srv.Close()
	select {
	case err := <-r.done:
		if !errors.Is(err, errStalled) {
			t.Fatalf("Pull after the server went away: %v, want a stall", err)
		}
		t.Logf("Pull returned %v after %v", err, time.Since(gone).Round(time.Millisecond))
	case <-time.After(60 * time.Second):
		t.Fatal("Pull did not return after the server went away")
	}
	r.col.Stop()
	r.base.Check(t, 20*time.Second)
}

// TestPullH265 plays live H.265 (hvc1) with a SegmentTimeline.
func TestPullH265(t *testing.T) {
	t.Parallel()
	r := startLive(t, "libx265", true)
	checkLive(t, r, media.CodecH265)
	if p := r.s.Tracks()[0].Params; len(p.VPS) == 0 {
		t.Fatal("H.265 track without VPS")
	}
}
