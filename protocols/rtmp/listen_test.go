package rtmp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestListenReconnect publishes to a listen input, stops and starts again three times: the
// Stream marks three discontinuities, a second concurrent publisher is refused, and goroutines and descriptors
// come back to where they were.
func TestListenReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	func() {
		s, r, closeStream := readStream(t, "listen", "test")
		defer closeStream()
		addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- Listen(ctx, s, ListenOptions{Addr: addr, Log: testLog(t)}) }()

		readerDiscs := streamtest.CountDiscontinuities(r)

		url := "rtmp://" + addr + "/any/thing"
		for i := range 3 {
			var p *testutil.Child
			// The listener may not be up yet for the first round.
			deadline := time.Now().Add(10 * time.Second)
			for {
				p = startFFmpeg(t, append(encodeArgs(2, "500k"), "-f", "flv", url)...)
				err := p.Wait(30 * time.Second)
				if err != nil && strings.Contains(err.Error(), "Connection refused") && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				if err != nil {
					t.Fatalf("round %d: %v: %s", i, err, p.Stderr())
				}
				break
			}
			testutil.Eventually(t, 10*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })
		}

		// One at a time: a second publisher is refused while the first one is live.
		first := startFFmpeg(t, append(encodeArgs(6, "500k"), "-f", "flv", "rtmp://"+addr+"/a/b")...)
		testutil.Eventually(t, 10*time.Second, "the publisher", func() bool { return s.Publishing() })
		second := startFFmpeg(t, append(encodeArgs(2, "500k"), "-f", "flv", "rtmp://"+addr+"/c/d")...)
		if err := second.Wait(30 * time.Second); err == nil {
			t.Fatal("a second concurrent publisher was accepted")
		}
		if err := first.Wait(30 * time.Second); err != nil {
			t.Fatalf("first publisher: %v", err)
		}
		testutil.Eventually(t, 10*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })

		if tr := s.Tracks(); len(tr) != 2 || tr[0].Codec != media.CodecH264 || tr[0].Params.Width != 640 ||
			tr[0].Params.Height != 360 || tr[1].Codec != media.CodecAAC {
			t.Errorf("tracks %+v", tr)
		}
		if got := s.Discontinuities(); got != 3 {
			t.Errorf("stream discontinuities %d, want 3 (four sessions)", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Listen: %v", err)
		}
		if n := readerDiscs(); n != 3 {
			t.Errorf("reader saw %d discontinuities, want 3", n)
		}
	}()
	base.Check(t, 15*time.Second)
}

func TestListenBusyPort(t *testing.T) {
	srv := &Server{Registry: stream.NewRegistry(stream.Options{})}
	addr := startServer(t, srv)
	err := Listen(context.Background(), stream.New("x", stream.Options{}), ListenOptions{Addr: addr, Log: testLog(t)})
	if err == nil || !strings.Contains(err.Error(), "rtmp listen "+addr) {
		t.Fatalf("Listen on a busy port: %v", err)
	}
}
