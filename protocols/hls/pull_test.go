package hls

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// liveCase is one end-to-end run: ffmpeg writes a live playlist into a served folder, Pull
// plays it into a Stream.
type liveCase struct {
	codec    string // libx264 or libx265
	args     []string
	playlist string // what Pull is pointed at
	probe    string // the media playlist whose segments give the source bitrate
}

func startLive(t *testing.T, lc liveCase) *pulltest.Live {
	t.Helper()
	return pulltest.StartLive(t, pullURL, "hls-test", lc.codec, lc.args, lc.playlist)
}

// checkLive asserts the tracks, the units and the bitrate against the source.
func checkLive(t *testing.T, r *pulltest.Live, lc liveCase, video media.Codec) {
	t.Helper()
	r.Check(t, video, func() float64 { return sourceKbps(t, r.Dir, lc.probe) })
}

// TestPullTSEndlist plays live MPEG-TS segments, then the encoder stops: the playlist gets
// EXT-X-ENDLIST and Pull returns nil, leaving no goroutine or descriptor behind.
func TestPullTSEndlist(t *testing.T) {
	lc := liveCase{codec: "libx264", args: hlsArgs(false), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH264)
	r.FF.Stop()
	r.CheckEnded(t, "EXT-X-ENDLIST")
}

// TestPullFMP4ServerGone plays live fMP4 segments, then the server goes away: Pull fails with
// a stall within three target durations and leaves nothing behind.
func TestPullFMP4ServerGone(t *testing.T) {
	lc := liveCase{codec: "libx264", args: hlsArgs(true), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH264)
	r.CheckServerGone(t, httpget.ErrStalled)
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
	testutil.FFmpeg(t, append(append(pulltest.EncodeArgs(lc.codec), lc.args...), filepath.Join(dir, lc.playlist))...)
	streamtest.WaitFile(t, filepath.Join(dir, "master.m3u8"))
	r := &pulltest.Live{Dir: dir, Srv: srv, URL: srv.URL + "/master.m3u8", S: stream.New("hls-master", stream.Options{})}
	r.Col = streamtest.Collect(t, r.S)
	r.Done = pulltest.Async(t, pullURL, r.URL, r.S)
	checkLive(t, r, lc, media.CodecH264)
}

// TestPullH265 plays live H.265 in fMP4 segments (hvc1).
func TestPullH265(t *testing.T) {
	t.Parallel()
	lc := liveCase{codec: "libx265", args: hlsArgs(true), playlist: "index.m3u8", probe: "index.m3u8"}
	r := startLive(t, lc)
	checkLive(t, r, lc, media.CodecH265)
	if p := r.S.Tracks()[0].Params; len(p.VPS) == 0 {
		t.Fatal("H.265 track without VPS")
	}
}

// pullURL is Pull as the shared pull checks call it.
func pullURL(ctx context.Context, url string, s *stream.Stream, log *slog.Logger) error {
	return Pull(ctx, s, PullOptions{URL: url, Log: log})
}
