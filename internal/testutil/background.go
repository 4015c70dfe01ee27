package testutil

import (
	"context"
	"testing"
	"time"
)

// Running is a Run(ctx) error function started in the background by Go.
type Running struct {
	cancel context.CancelFunc
	done   chan error
}

// Go runs run in a goroutine under a context of its own, cancelled by Stop or when the test
// ends.
func Go(t testing.TB, run func(ctx context.Context) error) *Running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx) }()
	t.Cleanup(cancel)
	return r
}

// Stop cancels run's context and fails the test unless run returns nil within d.
func (r *Running) Stop(t testing.TB, d time.Duration) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(d):
		t.Fatal("Run did not return after cancel")
	}
}
