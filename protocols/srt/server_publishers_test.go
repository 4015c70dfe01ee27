package srt

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

// TestServerPublishers: every publisher session, the shortest ffmpeg makes (0.1 s of media
// sent as fast as it encodes) and one that is killed (the peer idle timeout ends it), is told
// once connected and once disconnected, in order, with the stream id and the publisher's
// address; a publisher refused on a busy stream and a receiver are told nothing.
func TestServerPublishers(t *testing.T) {
	requireFFmpeg(t)
	log := &sessionLog{}
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv, err := NewServer(ServerConfig{Name: "Studio", Addr: "127.0.0.1:0", Publishers: log, Log: testLog(t),
		Options: Options{PeerIdleTimeout: time.Second}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, srv.Run)
	const id = "publisher/studio/cam1"
	url := fmt.Sprintf("srt://127.0.0.1:%d?streamid=%s&latency=200000", portOf(srv.Addr()), id)

	const short = 3
	for i := range short {
		p := startFFmpeg(t, "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-t", "0.1",
			"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "mpegts", url)
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Fatalf("short publisher %d: %v\n%s", i, err, p.out.String())
		}
		eventually(t, 10*time.Second, fmt.Sprintf("short session %d told", i), func() bool { return len(log.calls()) == 2*(i+1) })
	}

	long := publish(t, url, 60)
	publishing(t, reg, "cam1", long)
	if len(log.calls()) != 2*short+1 {
		t.Fatalf("the long session: calls %+v", log.calls())
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
	eventually(t, 15*time.Second, "the killed session disconnected", func() bool { return len(log.calls()) == 2*short+2 })

	calls := log.calls()
	var lengths []time.Duration
	seen := map[string]bool{}
	for i := 0; i < len(calls); i += 2 {
		c, d := calls[i], calls[i+1]
		if !c.connected || d.connected || c.streamID != id || d.streamID != id || c.addr != d.addr ||
			!strings.HasPrefix(c.addr, "127.0.0.1:") || seen[c.addr] {
			t.Fatalf("session %d: %+v then %+v, want connected then disconnected of %q from one new loopback address; all: %+v",
				i/2, c, d, id, calls)
		}
		seen[c.addr] = true
		lengths = append(lengths, d.at.Sub(c.at))
	}
	t.Logf("session lengths: %v", lengths)
	if shortest := min(lengths[0], lengths[1], lengths[2]); shortest >= 250*time.Millisecond {
		t.Errorf("no short session lasted under 250 ms (%v): the test did not exercise one", lengths[:short])
	}
}
