package streamtest

import (
	"context"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// CheckReconnects runs serve (an input that publishes into s until its ctx ends) while
// publish makes n publisher sessions one after another (PublishSessions). It checks that the
// units s carried are sane, that what the sessions after the first left behind (goroutines,
// descriptors) is gone within 10 s, and that once serve returned (nil) the process is back to
// where it was before it started. The caller must not be parallel: it counts the process's
// goroutines and descriptors.
func CheckReconnects(t *testing.T, s *stream.Stream, n int, serve func(ctx context.Context) error, publish func() error) {
	t.Helper()
	b0 := testutil.TakeBaseline()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx) }()
	col := Collect(t, s)
	var b1 testutil.Baseline
	PublishSessions(t, s, n, publish, func(i int) {
		if i == 0 {
			// The input is up and the first session is over: what later sessions leave
			// behind shows against this.
			b1 = testutil.TakeBaseline()
		}
	})
	b1.Check(t, 10*time.Second)
	CheckUnits(t, s.Tracks(), col.Snapshot())
	col.Stop()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b0.Check(t, 10*time.Second)
}
