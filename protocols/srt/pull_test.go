package srt

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/stream"
)

// TestPullFromFFmpegListener calls an ffmpeg that listens and sends, until ffmpeg ends the
// stream: Pull then returns nil.
func TestPullFromFFmpegListener(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	port := testutil.FreePort(t)
	src := publish(t, fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&latency=200000", port), 6)
	waitUDPBound(t, port, src)

	s := stream.New("pulled", stream.Options{Log: testLog(t)})
	errc := make(chan error, 1)
	go func() {
		errc <- Pull(context.Background(), s, PullOptions{URL: fmt.Sprintf("srt://127.0.0.1:%d?latency=200&conntimeo=10000", port), Log: testLog(t)})
	}()
	testutil.Eventually(t, 20*time.Second, "tracks", func() bool {
		select {
		case err := <-errc:
			t.Fatalf("Pull returned before media came: %v", err)
		default:
		}
		return len(s.Tracks()) > 0 && s.Stats().UnitsIn > 0
	})
	requireTracks(t, s.Tracks())
	if n := checkUnits(t, s, 2*time.Second); n < 40 {
		t.Fatalf("read %d units in 2 s", n)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Pull after the remote ended: %v\n%s", err, src.out.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("Pull did not return after ffmpeg ended")
	}
	if s.Publishing() {
		t.Fatal("stream still has a publisher")
	}
	src.stop()
	base.Check(t, 15*time.Second)
}

// TestPullFromServer pulls a stream from our own server as a receiver, with a passphrase.
func TestPullFromServer(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	const pass = "correct-horse-battery"
	srv, reg, stopSrv := startServer(t, Options{Passphrase: pass})
	port := portOf(srv.Addr())
	src := publish(t, fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/studio/cam1&latency=200000&passphrase=%s&pbkeylen=32", port, pass), 60)
	publishing(t, reg, "cam1", src)

	s := stream.New("pulled", stream.Options{Log: testLog(t)})
	url := fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/studio/cam1&passphrase=%s&pbkeylen=24", port, pass)
	probe := &Probe{}
	stopPull := testutil.Run(t, func(ctx context.Context) error {
		return Pull(ctx, s, PullOptions{URL: url, Log: testLog(t), Probe: probe})
	})
	testutil.Eventually(t, 20*time.Second, "tracks", func() bool { return len(s.Tracks()) > 0 && s.Stats().UnitsIn > 0 })
	requireTracks(t, s.Tracks())
	if n := checkUnits(t, s, 2*time.Second); n < 40 {
		t.Fatalf("read %d units in 2 s", n)
	}
	if got := srv.ActiveStreams(); len(got) != 1 || got[0].Receivers != 1 {
		t.Fatalf("ActiveStreams = %+v, want one stream with one receiver", got)
	}
	// The probe shows the caller's link: packets received, the negotiated latency, the peer.
	st, peer, ok := probe.Link()
	if !ok || st.PktRecv == 0 || st.Latency != DefaultLatency || peer != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("probe: ok %v, peer %s, stats %+v", ok, peer, st)
	}
	if err := stopPull(); err != nil {
		t.Fatalf("Pull after its context ended: %v", err)
	}
	if _, _, ok := probe.Link(); ok {
		t.Fatal("the probe still shows a link after Pull returned")
	}

	src.stop()
	stopAndCheck(t, stopSrv, base)
}

// TestPullRejected: a server's refusals (wrong passphrase, wrong slug, no such stream) fail the
// Pull at the handshake, with the reason in the error, and leave nothing behind (gosrt, the
// library before our own stack, leaked a goroutine or two per refused dial).
func TestPullRejected(t *testing.T) {
	const pass = "correct-horse-battery"
	base := testutil.TakeBaseline()
	srv, _, stopSrv := startServer(t, Options{Passphrase: pass})
	port := portOf(srv.Addr())
	refused := []string{
		fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/studio/cam1&passphrase=wrong-horse-battery&conntimeo=2000", port),
		fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/other/cam1&passphrase=%s&conntimeo=2000", port, pass),
		fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/studio/none&passphrase=%s&conntimeo=2000", port, pass),
	}
	for _, url := range refused {
		err := Pull(context.Background(), stream.New("x", stream.Options{}), PullOptions{URL: url, Log: testLog(t)})
		if err == nil || !strings.Contains(err.Error(), "rejected") {
			t.Fatalf("Pull %s: %v, want a refusal", shown(url), err)
		}
		if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), "wrong-horse") {
			t.Fatalf("error shows the passphrase: %v", err)
		}
	}
	stopAndCheck(t, stopSrv, base)
}
