package srt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/stream"
)

// liveSource publishes the CBR source through a listen input into a new Stream.
func liveSource(t *testing.T, opts stream.Options) (*stream.Stream, func() error) {
	t.Helper()
	opts.Log = testLog(t)
	s := stream.New("source", opts)
	l, err := NewListener(s, ListenOptions{Addr: "127.0.0.1:0", Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	stop := testutil.Run(t, l.Run)
	pub := publish(t, fmt.Sprintf("srt://127.0.0.1:%d?latency=200000", portOf(l.Addr())), 60)
	testutil.Eventually(t, 20*time.Second, "the source to publish", func() bool {
		if pub.exited() {
			t.Fatalf("publisher exited: %v\n%s", pub.err, pub.out.String())
		}
		return s.Publishing() && s.Stats().UnitsIn > 0
	})
	return s, func() error { pub.stop(); return stop() }
}

// TestSendCaller sends to an ffmpeg that listens and records 5 s.
func TestSendCaller(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	s, stopSource := liveSource(t, stream.Options{})
	port := testutil.FreePort(t)
	out := filepath.Join(t.TempDir(), "out.ts")
	sink := startFFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?mode=listener", port), "-c", "copy", "-t", "5", out)
	waitUDPBound(t, port, sink)

	r, err := s.NewReader("send")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- Send(context.Background(), r, s.Tracks(), SendOptions{URL: fmt.Sprintf("srt://127.0.0.1:%d?conntimeo=10000", port), Log: testLog(t)})
	}()
	// Send returns once ffmpeg leaves; if it returns while ffmpeg still records, that is a failure.
	var sendErr error
	select {
	case <-sink.done:
		select {
		case sendErr = <-errc:
		case <-time.After(20 * time.Second):
			t.Fatal("Send did not return after the peer left")
		}
	case sendErr = <-errc:
		select {
		case <-sink.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Send returned while ffmpeg was recording: %v", sendErr)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("ffmpeg still recording after 40 s:\n%s", sink.out.String())
	}
	if sink.err != nil {
		t.Fatalf("ffmpeg: %v\n%s", sink.err, sink.out.String())
	}
	requireH264AAC(t, out)
	if !errors.Is(sendErr, ErrPeerClosed) {
		t.Fatalf("Send after the peer left: %v, want ErrPeerClosed", sendErr)
	}
	stopAndCheck(t, stopSource, base)
}

// TestSendListener waits for ffmpeg to call (random datagrams come first) and records 3 s.
func TestSendListener(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	// A small queue and lag limit: a reader left unread while Send waits would be closed.
	s, stopSource := liveSource(t, stream.Options{QueueSize: 32, LagLimit: 500 * time.Millisecond})
	port := testutil.FreePort(t)
	r, err := s.NewReader("send")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	url := fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&passphrase=correct-horse-battery", port)
	stopSend := testutil.Run(t, func(ctx context.Context) error { return Send(ctx, r, nil, SendOptions{URL: url, Log: testLog(t)}) })
	waitUDPBound(t, port, nil)
	sendRandomDatagrams(t, port, 2<<20)
	// Waiting for a caller far longer than the queue lasts must not close the reader.
	time.Sleep(1500 * time.Millisecond)
	out := filepath.Join(t.TempDir(), "out.ts")
	sink := startFFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?passphrase=correct-horse-battery", port), "-c", "copy", "-t", "3", out)
	if err := sink.wait(t, 40*time.Second); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, sink.out.String())
	}
	requireH264AAC(t, out)
	if err := stopSend(); !errors.Is(err, ErrPeerClosed) {
		t.Fatalf("Send after the caller left: %v, want ErrPeerClosed", err)
	}
	stopAndCheck(t, stopSource, base)
}
