package pulltest

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// Source of the end-to-end tests: 640x360 at 25 fps, a key frame every 2 s (one per
// segment), constant bitrate, and 64 kbit/s AAC.
const (
	SrcWidth, SrcHeight = 640, 360
	SrcVideoKbps        = 1000
	SrcAudioKbps        = 64
)

// EncodeArgs returns ffmpeg's input and encoding arguments for the paced test source; codec
// is libx264 or libx265.
func EncodeArgs(codec string) []string {
	return streamtest.PacedSource(codec, SrcWidth, SrcHeight, SrcVideoKbps, SrcAudioKbps)
}

// Live is one end-to-end run: ffmpeg writes a live presentation into a served folder, a Pull
// plays it into a Stream.
type Live struct {
	Dir  string
	Srv  interface{ Close() }
	URL  string // what Pull is pointed at
	FF   *testutil.Process
	S    *stream.Stream
	Col  *streamtest.Collector
	Base testutil.Baseline
	Done <-chan error
}

// StartLive has ffmpeg encode the paced source with codec and write it with muxer args to
// playlist in a served folder, waits for playlist to appear and starts pull on it, collecting
// what it publishes into a Stream named name.
func StartLive(t *testing.T, pull PullFunc, name, codec string, args []string, playlist string) *Live {
	t.Helper()
	testutil.RequireFFmpeg(t)
	dir := t.TempDir()
	srv := streamtest.Serve(t, dir)
	full := append(EncodeArgs(codec), args...)
	ff := testutil.FFmpeg(t, append(full, filepath.Join(dir, playlist))...)
	streamtest.WaitFile(t, filepath.Join(dir, playlist))
	r := &Live{Dir: dir, Srv: srv, URL: srv.URL + "/" + playlist, FF: ff, S: stream.New(name, stream.Options{})}
	r.Col = streamtest.Collect(t, r.S)
	r.Base = testutil.TakeBaseline()
	r.Done = Async(t, pull, r.URL, r.S)
	return r
}

// Check asserts the tracks (video then AAC, the source's size and parameter sets), the units
// and the bitrate: within 15 % of sourceKbps, what the segments ffmpeg wrote carry.
func (r *Live) Check(t *testing.T, video media.Codec, sourceKbps func() float64) {
	t.Helper()
	tracks := streamtest.WaitTracks(t, r.S, 60*time.Second)
	if len(tracks) != 2 || tracks[0].Codec != video || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %v, want %v and AAC", ingest.Describe(tracks), video)
	}
	if p := tracks[0].Params; p.Width != SrcWidth || p.Height != SrcHeight || len(p.SPS) == 0 || len(p.PPS) == 0 {
		t.Fatalf("video params %dx%d sps %d pps %d", p.Width, p.Height, len(p.SPS), len(p.PPS))
	}
	if p := tracks[1].Params; tracks[1].ClockRate != 48000 || p.SampleRate != 48000 || len(p.AudioConfig) == 0 {
		t.Fatalf("audio track %+v", tracks[1])
	}
	// Let the 2 s bitrate window fill with paced units before measuring.
	testutil.Eventually(t, 30*time.Second, "media flows", func() bool {
		return r.S.Stats().UnitsIn > 200
	})
	time.Sleep(time.Second)
	got := streamtest.MeanBitrate(r.S, 6*time.Second)
	want := sourceKbps()
	t.Logf("bitrate: stream %.0f kbit/s, source segments %.0f kbit/s (configured %d)", got, want, SrcVideoKbps+SrcAudioKbps)
	streamtest.Within(t, "stream bitrate vs source", got, want, 0.15)
	streamtest.CheckPulled(t, tracks, r.Col.Snapshot())
}

// CheckEnded waits (at most 60 s) for Pull to return nil once the presentation ended (what
// says how), then checks the units and that no goroutine or descriptor is left behind.
func (r *Live) CheckEnded(t *testing.T, what string) {
	t.Helper()
	select {
	case err := <-r.Done:
		if err != nil {
			t.Fatalf("Pull after %s: %v", what, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("Pull did not return after %s", what)
	}
	streamtest.CheckPulled(t, r.S.Tracks(), r.Col.Snapshot())
	r.Col.Stop()
	r.Base.Check(t, 20*time.Second)
}

// CheckServerGone closes the server and waits (at most 60 s) for Pull to fail with stalled,
// then checks that no goroutine or descriptor is left behind.
func (r *Live) CheckServerGone(t *testing.T, stalled error) {
	t.Helper()
	gone := time.Now()
	r.Srv.Close()
	select {
	case err := <-r.Done:
		if !errors.Is(err, stalled) {
			t.Fatalf("Pull after the server went away: %v, want a stall", err)
		}
		t.Logf("Pull returned %v after %v", err, time.Since(gone).Round(time.Millisecond))
	case <-time.After(60 * time.Second):
		t.Fatal("Pull did not return after the server went away")
	}
	r.Col.Stop()
	r.Base.Check(t, 20*time.Second)
}
