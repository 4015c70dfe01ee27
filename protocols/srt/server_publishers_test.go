package srt

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

var _ Publishers = (*testutil.SessionLog)(nil)

// TestServerPublishers: every publisher session, the shortest ffmpeg makes (0.1 s of media
// sent as fast as it encodes) and one that is killed (the peer idle timeout ends it), is told
// once connected and once disconnected, in order, with the stream id and the publisher's
// address; a publisher refused on a busy stream and a receiver are told nothing.
func TestServerPublishers(t *testing.T) {
	testutil.RequireFFmpeg(t)
	log := &testutil.SessionLog{}
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv, err := NewServer(ServerConfig{Name: "Studio", Addr: "127.0.0.1:0", Publishers: log, Log: testLog(t),
		Options: Options{PeerIdleTimeout: time.Second}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Run(t, srv.Run)
	const id = "publisher/studio/cam1"
	url := fmt.Sprintf("srt://127.0.0.1:%d?streamid=%s&latency=200000", portOf(srv.Addr()), id)

	const short = 3
	for i := range short {
		p := startFFmpeg(t, append(testutil.Pattern{Width: 320, Height: 180, Silent: true}.Args(), "-t", "0.1",
			"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "mpegts", url)...)
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Fatalf("short publisher %d: %v\n%s", i, err, p.out.String())
		}
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("short session %d told", i), func() bool { return len(log.Calls()) == 2*(i+1) })
	}

	long := publish(t, url, 60)
	publishing(t, reg, "cam1", long)
	if len(log.Calls()) != 2*short+1 {
		t.Fatalf("the long session: calls %+v", log.Calls())
	}
	if err := publish(t, url, 5).wait(t, 30*time.Second); err == nil {
		t.Fatal("a second publisher of a busy stream was accepted")
	}
	recv := startFFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/studio/cam1&latency=200000", portOf(srv.Addr())),
		"-c", "copy", "-t", "1", "-f", "null", "-")
	if err := recv.wait(t, 30*time.Second); err != nil {
		t.Fatalf("receiver: %v\n%s", err, recv.out.String())
	}
	_ = long.cmd.Process.Kill()
	testutil.Eventually(t, 15*time.Second, "the killed session disconnected", func() bool { return len(log.Calls()) == 2*short+2 })

	lengths := testutil.CheckSessions(t, log.Calls(), id)
	t.Logf("session lengths: %v", lengths)
	if shortest := min(lengths[0], lengths[1], lengths[2]); shortest >= 250*time.Millisecond {
		t.Errorf("no short session lasted under 250 ms (%v): the test did not exercise one", lengths[:short])
	}
}
