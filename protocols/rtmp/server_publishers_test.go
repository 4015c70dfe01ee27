package rtmp

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

// sessionLog records what a Server tells its Publishers, with the time of each call.
type sessionLog struct {
	mu  sync.Mutex
	got []sessionCall
}

type sessionCall struct {
	connected      bool
	streamID, addr string
	at             time.Time
}

var _ Publishers = (*sessionLog)(nil)

func (l *sessionLog) PublisherConnected(streamID, addr string) { l.add(true, streamID, addr) }

func (l *sessionLog) PublisherDisconnected(streamID, addr string) { l.add(false, streamID, addr) }

func (l *sessionLog) add(connected bool, streamID, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, sessionCall{connected, streamID, addr, time.Now()})
}

func (l *sessionLog) calls() []sessionCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sessionCall(nil), l.got...)
}

// checkSessions checks that calls are connected/disconnected pairs of streamID from distinct
// loopback addresses, in order, and returns each session's length.
func checkSessions(t *testing.T, calls []sessionCall, streamID string) []time.Duration {
	t.Helper()
	if len(calls)%2 != 0 {
		t.Fatalf("%d calls, not pairs: %+v", len(calls), calls)
	}
	var lengths []time.Duration
	seen := map[string]bool{}
	for i := 0; i < len(calls); i += 2 {
		c, d := calls[i], calls[i+1]
		if !c.connected || d.connected || c.streamID != streamID || d.streamID != streamID || c.addr != d.addr ||
			!strings.HasPrefix(c.addr, "127.0.0.1:") || seen[c.addr] {
			t.Fatalf("session %d: %+v then %+v, want connected then disconnected of %q from one new loopback address; all: %+v",
				i/2, c, d, streamID, calls)
		}
		seen[c.addr] = true
		lengths = append(lengths, d.at.Sub(c.at))
	}
	return lengths
}

// TestServerPublishers: every publishing session, the shortest ffmpeg makes (0.1 s of media
// sent as fast as it encodes) and one that is killed, is told once connected and once
// disconnected, in order, with the key and the publisher's address; a publisher refused on a
// busy key is told nothing.
func TestServerPublishers(t *testing.T) {
	requireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	log := &sessionLog{}
	addr := startServer(t, &Server{Registry: reg, Publishers: log})
	url := fmt.Sprintf("rtmp://%s/live/cam1", addr)

	const short = 3
	for i := range short {
		args := []string{"-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25",
			"-t", "0.1", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "flv", url}
		if err := startFFmpeg(t, args...).wait(30 * time.Second); err != nil {
			t.Fatalf("short publisher %d: %v", i, err)
		}
		waitFor(t, 10*time.Second, fmt.Sprintf("short session %d told", i), func() bool { return len(log.calls()) == 2*(i+1) })
	}

	long := startFFmpeg(t, append(encodeArgs(60, "500k"), "-f", "flv", url)...)
	waitFor(t, 20*time.Second, "the long session connected", func() bool { return len(log.calls()) == 2*short+1 })
	if err := startFFmpeg(t, append(encodeArgs(5, "500k"), "-f", "flv", url)...).wait(30 * time.Second); err == nil {
		t.Fatal("a second publisher of a busy key was accepted")
	}
	_ = long.cmd.Process.Kill()
	waitFor(t, 15*time.Second, "the killed session disconnected", func() bool { return len(log.calls()) == 2*short+2 })

	lengths := checkSessions(t, log.calls(), "cam1")
	t.Logf("session lengths: %v", lengths)
	if shortest := min(lengths[0], lengths[1], lengths[2]); shortest >= 250*time.Millisecond {
		t.Errorf("no short session lasted under 250 ms (%v): the test did not exercise one", lengths[:short])
	}
}
