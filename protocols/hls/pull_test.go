package hls

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// liveCase is one end-to-end run: ffmpeg writes a live playlist into a served folder, Pull
// plays it into a Stream.
type liveCase struct {
	codec    string // libx264 or libx265
	args     []string
	playlist string // what Pull is pointed at
	probe    string // the media playlist whose segments give the source bitrate
}

// liveRun is a running liveCase.
type liveRun struct {
	dir  string
	srv  interface{ Close() }
	url  string
	ff   *testutil.Process
	s    *stream.Stream
	col  *streamtest.Collector
	base testutil.Baseline
	done <-chan error
}

func startLive(t *testing.T, lc liveCase) *liveRun {
	t.Helper()
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	srv := streamtest.Serve(t, dir)
	args := append(encodeArgs(lc.codec), lc.args...)
	ff := testutil.FFmpeg(t, append(args, filepath.Join(dir, lc.playlist))...)
	streamtest.WaitFile(t, filepath.Join(dir, lc.playlist))
	r := &liveRun{dir: dir, srv: srv, url: srv.URL + "/" + lc.playlist, ff: ff, s: stream.New("hls-test", stream.Options{})}
	r.col = streamtest.Collect(t, r.s)
	r.base = testutil.TakeBaseline()
	r.done = pullAsync(t, r.url, r.s)
	return r
}

// checkLive asserts the tracks, the units and the bitrate against the source.
func checkLive(t *testing.T, r *liveRun, lc liveCase, video media.Codec) {
	t.Helper()
	tracks := streamtest.WaitTracks(t, r.s, 60*time.Second)
	if len(tracks) != 2 || tracks[0].Codec != video || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %+v, want %v and AAC", tracks, video)
	}
	if p := tracks[0].Params; p.Width != srcWidth || p.Height != srcHeight || len(p.SPS) == 0 || len(p.PPS) == 0 {
		t.Fatalf("video params %dx%d sps %d pps %d", p.Width, p.Height, len(p.SPS), len(p.PPS))
	}
	if p := tracks[1].Params; tracks[1].ClockRate != 48000 || p.SampleRate != 48000 || len(p.AudioConfig) == 0 {
		t.Fatalf("audio track %+v", tracks[1])
	}
	// Let the 2 s bitrate window fill with paced units before measuring.
	testutil.Eventually(t, 30*time.Second, "media flows", func() bool {
		return r.s.Stats().UnitsIn > 200
	})
	time.Sleep(time.Second)
	got := streamtest.MeanBitrate(r.s, 6*time.Second)
	want := sourceKbps(t, r.dir, lc.probe)
	t.Logf("bitrate: stream %.0f kbit/s, source segments %.0f kbit/s (configured %d)", got, want, srcVideoKbps+srcAudioKbps)
	streamtest.Within(t, "stream bitrate vs source", got, want, 0.15)
	streamtest.CheckPulled(t, tracks, r.col.Snapshot())
}

// TestPullTSEndlist plays live MPEG-TS segments, then the encoder stops: the playlist gets
// EXT-X-ENDLIST and Pull returns nil, leaving no goroutine or descriptor behind.
func TestPullTSEndlist(t *testing.T) {
	lc := liveCase{codec: "libx264", args: hlsArgs(false), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH264)
	r.ff.Stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Pull after EXT-X-ENDLIST: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Pull did not return after EXT-X-ENDLIST")
	}
	streamtest.CheckPulled(t, r.s.Tracks(), r.col.Snapshot())
	r.col.Stop()
	r.base.Check(t, 20*time.Second)
}

// TestPullFMP4ServerGone plays live fMP4 segments, then the server goes away: Pull fails with
// a stall within three target durations and leaves nothing behind.
func TestPullFMP4ServerGone(t *testing.T) {
	lc := liveCase{codec: "libx264", args: hlsArgs(true), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH264)
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

// TestPullMasterPicksHighest plays a multivariant playlist of two variants (1000 kbit/s
// 640x360 and 300 kbit/s 320x180): the higher one is played.
func TestPullMasterPicksHighest(t *testing.T) {
	t.Parallel()
	args := []string{
		"-map", "0:v", "-map", "1:a", "-map", "0:v", "-map", "1:a",
		"-b:v:1", "300k", "-maxrate:v:1", "300k", "-minrate:v:1", "300k", "-bufsize:v:1", "150k", "-s:v:1", "320x180",
		"-f", "hls", "-hls_time", "2", "-hls_list_size", "6", "-hls_flags", "delete_segments",
		"-master_pl_name", "master.m3u8", "-var_stream_map", "v:0,a:0 v:1,a:1",
	}
	lc := liveCase{codec: "libx264", args: args, playlist: "stream_%v.m3u8", probe: "stream_0.m3u8"}
	// ffmpeg names the media playlists after the pattern and writes master.m3u8 beside them.
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	srv := streamtest.Serve(t, dir)
	testutil.FFmpeg(t, append(append(encodeArgs(lc.codec), lc.args...), filepath.Join(dir, lc.playlist))...)
	streamtest.WaitFile(t, filepath.Join(dir, "master.m3u8"))
	r := &liveRun{dir: dir, srv: srv, url: srv.URL + "/master.m3u8", s: stream.New("hls-master", stream.Options{})}
	r.col = streamtest.Collect(t, r.s)
	r.done = pullAsync(t, r.url, r.s)
	checkLive(t, r, lc, media.CodecH264)
}

// TestPullH265 plays live H.265 in fMP4 segments (hvc1).
func TestPullH265(t *testing.T) {
	t.Parallel()
	lc := liveCase{codec: "libx265", args: hlsArgs(true), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH265)
	if p := r.s.Tracks()[0].Params; len(p.VPS) == 0 {
		t.Fatal("H.265 track without VPS")
	}
}
