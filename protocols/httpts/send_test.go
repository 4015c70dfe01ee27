package httpts

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// sendLoop runs Send from a new reader, retrying while the peer is not listening yet, until
// ctx ends.
func sendLoop(ctx context.Context, t *testing.T, s *stream.Stream, url, method string) error {
	for {
		r, err := s.NewReader("send")
		if err != nil {
			return err
		}
		tracks := s.Tracks()
		err = Send(ctx, r, tracks, SendOptions{URL: url, Method: method})
		r.Close()
		if ctx.Err() != nil || err == nil || !strings.Contains(err.Error(), "refused") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSendFFmpeg sends to ffmpeg listening as an HTTP server.
func TestSendFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("send-src", stream.Options{})
	streamtest.PlayCBR(t, s)
	testutil.Eventually(t, 10*time.Second, "tracks", func() bool { return len(s.Tracks()) > 0 })
	port := testutil.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	out := filepath.Join(t.TempDir(), "out.ts")
	ffErr := make(chan error, 1)
	go func() {
		ffErr <- streamtest.RunFFmpeg(context.Background(), t, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
			"-listen", "1", "-i", url, "-t", "5", "-c", "copy", "-f", "mpegts", out)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() { sent <- sendLoop(ctx, t, s, url, "") }()
	var err error
	select {
	case err = <-ffErr:
	case <-time.After(60 * time.Second):
		err = fmt.Errorf("ffmpeg did not finish")
	}
	cancel()
	if serr := <-sent; serr != nil {
		t.Logf("send: %v", serr) // ffmpeg hangs up after 5 s
	}
	if err != nil {
		t.Fatal(err)
	}
	streamtest.CheckReceivedAV(t, out)
}

// TestSendToServer sends by PUT to a Server, across a discontinuity of the source.
func TestSendToServer(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	tracks, aus := streamtest.ReadTS(t, streamtest.CBRFile(t, 3, "mpegts"))
	src := stream.New("send-src2", stream.Options{QueueSize: 2048})
	r, err := src.NewReader("send")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 { // two sessions with the same timestamps
		if err := streamtest.Play(context.Background(), src, tracks, aus, 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	dst := stream.New("send-dst", stream.Options{QueueSize: 2048})
	base := startServer(t, dst)
	col := streamtest.Collect(t, dst)
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() { sent <- Send(ctx, r, tracks, SendOptions{URL: base + "/in", Method: "put"}) }()
	testutil.Eventually(t, 20*time.Second, "all units", func() bool { return len(col.Snapshot()) >= 2*len(aus)-10 })
	cancel()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	got := col.Snapshot()
	streamtest.CheckCBRTracks(t, dst.Tracks())
	streamtest.CheckUnits(t, dst.Tracks(), got)
	if d := dst.Discontinuities(); d != 0 {
		t.Errorf("%d discontinuities at the receiver: Send must keep one continuous program", d)
	}
	_ = media.CodecH264
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	s := stream.New("send-err", stream.Options{})
	r, err := s.NewReader("x")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tracks := []media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}}}
	if err := Send(context.Background(), r, tracks, SendOptions{URL: "http://127.0.0.1:1/", Method: "GET"}); err == nil || !strings.Contains(err.Error(), "method") {
		t.Errorf("GET: %v", err)
	}
	if err := Send(context.Background(), r, tracks, SendOptions{URL: "ftp://127.0.0.1:1/", Method: ""}); err == nil {
		t.Error("ftp accepted")
	}
}
