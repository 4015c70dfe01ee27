package rtmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// publishTS publishes what ffmpeg encodes with args (to MPEG-TS on stdout) into s, until
// ffmpeg ends; it returns when the tracks are known and a function that waits for the end.
func publishTS(t *testing.T, s *stream.Stream, args ...string) func() error {
	t.Helper()
	cmd := exec.Command(testutil.RequireFFmpeg(t), append(args, "-f", "mpegts", "-")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := mpegts.NewDemuxer(out)
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatalf("demux: %v", err)
	}
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.SetTracks(tracks); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		defer pub.Close()
		for {
			au, err := d.Read()
			if errors.Is(err, io.EOF) {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			au.Arrival = time.Now()
			if err := pub.Write(au); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() error { return <-done }
}

func TestPushToFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s, r, closeStream := readStream(t, "src", "push")
	defer closeStream()

	port := testutil.FreePort(t)
	out := filepath.Join(t.TempDir(), "out.flv")
	recv := testutil.FFmpeg(t, "-listen", "1",
		"-i", fmt.Sprintf("rtmp://127.0.0.1:%d/live/key", port), "-c", "copy", out)
	ended := publishTS(t, s, encodeArgs(4, "1000k")...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pushed := make(chan error, 1)
	go func() {
		// ffmpeg listens once it has started: retry a refused dial.
		for {
			err := Push(ctx, r, s.Tracks(), PushOptions{URL: fmt.Sprintf("rtmp://127.0.0.1:%d/live", port), Key: "key"})
			if err != nil && strings.Contains(err.Error(), "connection refused") && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			pushed <- err
			return
		}
	}()
	if err := ended(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cancel() // ends Push, which closes the connection: ffmpeg finishes the file
	if err := <-pushed; err != nil {
		t.Fatalf("Push: %v", err)
	}
	if err := recv.Wait(30 * time.Second); err != nil {
		t.Fatalf("receiver: %v", err)
	}
	got := probe(t, out)
	if !strings.Contains(got, "h264,640,360") || !strings.Contains(got, "aac") {
		t.Fatalf("received file: %q", got)
	}
}

// TestPushHEVC sends H.265 with enhanced RTMP to our server and reads it back with Pull:
// ffmpeg 5.1 does not speak enhanced RTMP, so both ends are ours.
func TestPushHEVC(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv := &Server{Registry: reg}
	addr := startServer(t, srv)

	src, r, closeStream := readStream(t, "src", "push")
	defer closeStream()
	args := append(append([]string{"-hide_banner", "-loglevel", "error"},
		testutil.Pattern{Width: 320, Height: 240, SampleRate: 44100, Realtime: true}.Args()...), "-t", "20",
		"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=25", "-c:a", "aac")
	publishTS(t, src, args...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pushed := make(chan error, 1)
	go func() { pushed <- Push(ctx, r, src.Tracks(), PushOptions{URL: "rtmp://" + addr + "/live/hevc"}) }()

	got := waitPublished(t, reg, "hevc", 30*time.Second)
	tracks := got.Tracks()
	if tracks[0].Codec != media.CodecH265 || tracks[0].Params.Width != 320 || tracks[0].Params.VPS == nil {
		t.Fatalf("video track %+v", tracks[0])
	}

	// And back out through a player of ours.
	back, units := pullBackAndStop(t, "rtmp://"+addr+"/live/hevc", 50, cancel, pushed)
	if back.Tracks()[0].Codec != media.CodecH265 || !units[0].Key {
		t.Fatalf("pulled tracks %+v", back.Tracks())
	}
}

// pullBackAndStop plays url with Pull into a new stream until n units came, then ends the
// pull and the push (cancel), which must both end cleanly. It returns the stream and units.
func pullBackAndStop(t *testing.T, url string, n int, cancel context.CancelFunc, pushed <-chan error) (*stream.Stream, []*media.AccessUnit) {
	t.Helper()
	back, br, closeBack := readStream(t, "back", "test")
	t.Cleanup(closeBack)
	pctx, pcancel := context.WithCancel(context.Background())
	wait := runPull(t, pctx, url, back)
	units := readUnits(t, br, n, 30*time.Second)
	pcancel()
	if err := wait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-pushed; err != nil {
		t.Fatalf("Push: %v", err)
	}
	return back, units
}
