package udp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// startPull runs Pull until the test ends, or until it returns; its result comes on the
// channel.
func startPull(t *testing.T, url string, s *stream.Stream) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Pull(ctx, s, Options{URL: url, IdleTimeout: 500 * time.Millisecond}) }()
	t.Cleanup(cancel)
	return done
}

func TestPullUnicastTimeout(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("udp-pull", stream.Options{})
	port := testutil.FreePort(t)
	done := startPull(t, fmt.Sprintf("udp://@:%d?timeout=1000000&fifo_size=10000", port), s)
	col := streamtest.Collect(t, s)
	if err := publishUDP(context.Background(), t, port, 3); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Pull after the input went quiet: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Pull did not return after its timeout")
	}
	streamtest.CheckCBRReceived(t, s, col, 1, 10*time.Second)
}

func TestPullNothingTimeout(t *testing.T) {
	t.Parallel()
	s := stream.New("udp-quiet", stream.Options{})
	done := startPull(t, fmt.Sprintf("udp://:%d?timeout=300000", testutil.FreePort(t)), s)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no MPEG-TS") {
			t.Fatalf("Pull without input: %v, want a no-MPEG-TS error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Pull did not return after its timeout")
	}
}

// mcastGroup returns a group in the organisation-local scope 239.255.0.0/16.
func mcastGroup() string {
	return fmt.Sprintf("239.255.%d.%d", rand.IntN(250)+1, rand.IntN(250)+1)
}

// TestPullMulticastFFmpeg joins a group on the loopback interface, where ffmpeg sends with
// TTL 0 from 127.0.0.1: the datagrams never leave the host.
func TestPullMulticastFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("udp-mcast", stream.Options{})
	group, port := mcastGroup(), testutil.FreePort(t)
	startPull(t, fmt.Sprintf("udp://%s:%d?interface=lo", group, port), s)
	col := streamtest.Collect(t, s)
	args := append(streamtest.CBRArgs(3, true), "-f", "mpegts",
		fmt.Sprintf("udp://%s:%d?pkt_size=1316&ttl=0&localaddr=127.0.0.1", group, port))
	if err := streamtest.RunFFmpeg(context.Background(), t, args...); err != nil {
		t.Fatal(err)
	}
	streamtest.CheckCBRReceived(t, s, col, 51, 10*time.Second)
}

// TestSendPullMulticast sends with Send to a group (TTL 0, out of lo) and receives with Pull
// joined on lo by its address.
func TestSendPullMulticast(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	src := stream.New("mcast-src", stream.Options{})
	streamtest.PlayCBR(t, src)
	dst := stream.New("mcast-dst", stream.Options{})
	group, port := mcastGroup(), testutil.FreePort(t)
	startPull(t, fmt.Sprintf("udp://@%s:%d?localaddr=127.0.0.1", group, port), dst)
	col := streamtest.Collect(t, dst)
	startSend(t, src, fmt.Sprintf("udp://%s:%d?ttl=0&localaddr=127.0.0.1", group, port), Send)
	streamtest.CheckCBRReceived(t, dst, col, 101, 20*time.Second)
}

// TestPullMulticastSources: ffmpeg's sources= and block= filter a group's senders. ffmpeg
// sends from 127.0.0.1 on lo; the input whose sources name that address gets the stream, the
// one naming another sender and the one blocking 127.0.0.1 get nothing.
func TestPullMulticastSources(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	group, port := mcastGroup(), testutil.FreePort(t)
	base := fmt.Sprintf("udp://@%s:%d?localaddr=127.0.0.1&", group, port)
	from := stream.New("mcast-from", stream.Options{})
	other := stream.New("mcast-other", stream.Options{})
	blocked := stream.New("mcast-blocked", stream.Options{})
	startPull(t, base+"sources=127.0.0.1", from)
	startPull(t, base+"sources=127.0.0.9,127.0.0.10", other)
	startPull(t, base+"block=127.0.0.1", blocked)
	col := streamtest.Collect(t, from)
	time.Sleep(200 * time.Millisecond) // the three joins
	args := append(streamtest.CBRArgs(3, true), "-f", "mpegts",
		fmt.Sprintf("udp://%s:%d?pkt_size=1316&ttl=0&localaddr=127.0.0.1", group, port))
	if err := streamtest.RunFFmpeg(context.Background(), t, args...); err != nil {
		t.Fatal(err)
	}
	streamtest.CheckCBRReceived(t, from, col, 51, 10*time.Second)
	for _, s := range []*stream.Stream{other, blocked} {
		if st := s.Stats(); st.BytesIn != 0 || st.UnitsIn != 0 {
			t.Errorf("%s received %d bytes, %d units from a filtered sender", s.Name(), st.BytesIn, st.UnitsIn)
		}
	}
}
