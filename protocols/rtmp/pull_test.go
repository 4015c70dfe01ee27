package rtmp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// runPull runs Pull in the background; the returned function waits for its result.
func runPull(t *testing.T, ctx context.Context, url string, s *stream.Stream) func(time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Pull(ctx, s, PullOptions{URL: url, Log: testLog(t)}) }()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Pull did not return")
		}
	})
	return func(timeout time.Duration) error {
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(timeout):
			return fmt.Errorf("Pull still running after %s", timeout)
		}
	}
}

func TestPullFromFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	port := testutil.FreePort(t)
	url := fmt.Sprintf("rtmp://127.0.0.1:%d/live/key", port)
	ff := testutil.FFmpeg(t, append(encodeArgs(8, "1000k"), "-f", "flv", "-listen", "1", url)...)

	s, r, closeStream := readStream(t, "pull", "test")
	defer closeStream()
	// ffmpeg listens once it has opened its inputs: retry a refused dial.
	var wait func(time.Duration) error
	deadline := time.Now().Add(20 * time.Second)
	for {
		wait = runPull(t, context.Background(), url, s)
		err := wait(time.Second)
		if err != nil && strings.Contains(err.Error(), "connection refused") && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		break
	}
	units := readUnits(t, r, 100, 20*time.Second)
	tracks := s.Tracks()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[0].Params.Width != 640 || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %+v", tracks)
	}
	if !units[0].Key {
		t.Fatal("first unit is not a key frame")
	}
	time.Sleep(2500 * time.Millisecond)
	if br := s.Stats().Bitrate; br < 1064*0.85 || br > 1064*1.15 {
		t.Errorf("bitrate %.0f kbit/s, want 1064 ±15%%", br)
	}
	if err := wait(30 * time.Second); err != nil {
		t.Fatalf("Pull: %v (ffmpeg: %s)", err, ff.Stderr())
	}
	if s.Publishing() {
		t.Fatal("still publishing after the remote ended")
	}
}

func TestPullFromServer(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	addr := startServer(t, &Server{Registry: reg})
	url := fmt.Sprintf("rtmp://%s/live/cam", addr)
	startFFmpeg(t, append(encodeArgs(30, "1000k"), "-f", "flv", url)...)
	waitPublished(t, reg, "cam", 20*time.Second)

	s, r, closeStream := readStream(t, "pulled", "test")
	defer closeStream()
	ctx, cancel := context.WithCancel(context.Background())
	wait := runPull(t, ctx, url, s)
	units := readUnits(t, r, 75, 20*time.Second)
	if !units[0].Key || s.Tracks()[0].Params.Height != 360 {
		t.Fatalf("first unit key %v, tracks %+v", units[0].Key, s.Tracks())
	}
	cancel()
	if err := wait(10 * time.Second); err != nil {
		t.Fatalf("Pull after cancel: %v", err)
	}

	// A stream that does not exist is refused.
	err := Pull(context.Background(), stream.New("x", stream.Options{}), PullOptions{URL: fmt.Sprintf("rtmp://%s/live/nothing", addr), Log: testLog(t)})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("Pull of a missing stream: %v", err)
	}
}
