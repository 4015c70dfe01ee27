package streamtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// PlayCBR publishes 4 s of the constant-bitrate test source (CBRFile) into s in real time,
// looping, until the test ends: a live source for the tests of outputs.
func PlayCBR(t *testing.T, s *stream.Stream) {
	t.Helper()
	tracks, aus := ReadTS(t, CBRFile(t, 4, "mpegts"))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = Play(ctx, s, tracks, aus, 1, 100)
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// PublishSessions runs publish n times, one publisher session after another. After each it
// waits up to 10 s for s to have no publisher, checks that s counted a discontinuity for each
// session after the first, and calls after(i) when after is not nil.
func PublishSessions(t *testing.T, s *stream.Stream, n int, publish func() error, after func(i int)) {
	t.Helper()
	for i := range n {
		if err := publish(); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
		if got := s.Discontinuities(); got != int64(i) {
			t.Fatalf("after %d publishers: %d discontinuities", i+1, got)
		}
		if after != nil {
			after(i)
		}
	}
}

// WaitPublished waits up to d for reg to hold the stream key with n tracks, and returns it.
func WaitPublished(t testing.TB, reg *stream.Registry, key string, n int, d time.Duration) *stream.Stream {
	t.Helper()
	var s *stream.Stream
	testutil.Eventually(t, d, "stream "+key+" published with its tracks", func() bool {
		var ok bool
		s, ok = reg.Get(key)
		return ok && len(s.Tracks()) == n
	})
	return s
}
