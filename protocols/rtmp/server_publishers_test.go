package rtmp

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

var _ Publishers = (*testutil.SessionLog)(nil)

// TestServerPublishers: every publishing session, the shortest ffmpeg makes (0.1 s of media
// sent as fast as it encodes) and one that is killed, is told once connected and once
// disconnected, in order, with the key and the publisher's address; a publisher refused on a
// busy key is told nothing.
func TestServerPublishers(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	log := &testutil.SessionLog{}
	addr := startServer(t, &Server{Registry: reg, Publishers: log})
	url := fmt.Sprintf("rtmp://%s/live/cam1", addr)

	const short = 3
	for i := range short {
		args := append(testutil.Pattern{Width: 320, Height: 180, Silent: true}.Args(),
			"-t", "0.1", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "flv", url)
		if err := startFFmpeg(t, args...).Wait(30 * time.Second); err != nil {
			t.Fatalf("short publisher %d: %v", i, err)
		}
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("short session %d told", i), func() bool { return len(log.Calls()) == 2*(i+1) })
	}

	long := startFFmpeg(t, append(encodeArgs(60, "500k"), "-f", "flv", url)...)
	testutil.Eventually(t, 20*time.Second, "the long session connected", func() bool { return len(log.Calls()) == 2*short+1 })
	if err := startFFmpeg(t, append(encodeArgs(5, "500k"), "-f", "flv", url)...).Wait(30 * time.Second); err == nil {
		t.Fatal("a second publisher of a busy key was accepted")
	}
	long.Kill()
	testutil.Eventually(t, 15*time.Second, "the killed session disconnected", func() bool { return len(log.Calls()) == 2*short+2 })

	lengths := testutil.CheckSessions(t, log.Calls(), "cam1")
	t.Logf("session lengths: %v", lengths)
	if shortest := min(lengths[0], lengths[1], lengths[2]); shortest >= 250*time.Millisecond {
		t.Errorf("no short session lasted under 250 ms (%v): the test did not exercise one", lengths[:short])
	}
}
