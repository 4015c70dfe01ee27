package srt

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestListenerReconnect sends 2 MB of random datagrams, then publishes four times in a row to
// the listen input: the Stream marks three discontinuities, a reader sees them, and goroutines
// and files return to the baseline.
func TestListenerReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	s := stream.New("listen", stream.Options{Log: testLog(t)})
	ep, err := ParseListenURL("srt://127.0.0.1:0?latency=200")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(s, ListenOptions{Addr: ep.Addr, Options: ep.Options, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	stop := testutil.Run(t, l.Run)
	url := fmt.Sprintf("srt://127.0.0.1:%d?streamid=anything&latency=200000", portOf(l.Addr()))
	// Garbage first: the publishers after it must still work.
	sendRandomDatagrams(t, portOf(l.Addr()), 2<<20)

	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readerDiscs := streamtest.CountDiscontinuities(r)

	for i := range 4 {
		secs := 2
		if i == 0 {
			secs = 60 // stopped once the second publisher was refused
		}
		before := s.Stats().UnitsIn
		pub := publish(t, url, secs)
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("session %d to publish", i+1), func() bool {
			return s.Publishing() && s.Stats().UnitsIn > before
		})
		requireTracks(t, s.Tracks())
		if i == 0 {
			// A second publisher while one is connected is refused.
			busy := publish(t, url, 3)
			if err := busy.wait(t, 30*time.Second); err == nil {
				t.Fatalf("second publisher was accepted:\n%s", busy.out.String())
			}
			if !s.Publishing() {
				t.Fatal("the first publisher left when the second was refused")
			}
			pub.stop()
		} else if err := pub.wait(t, 30*time.Second); err != nil {
			t.Fatalf("publisher %d: %v\n%s", i+1, err, pub.out.String())
		}
		testutil.Eventually(t, 15*time.Second, "the publisher to leave", func() bool { return !s.Publishing() })
	}
	if got := s.Discontinuities(); got != 3 {
		t.Fatalf("Discontinuities() = %d, want 3", got)
	}
	if got := readerDiscs(); got != 3 {
		t.Fatalf("reader saw %d discontinuities, want 3", got)
	}
	stopAndCheck(t, stop, base)
}
