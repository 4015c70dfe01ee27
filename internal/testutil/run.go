package testutil

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Run runs fn, a blocking Run(ctx) error, on a goroutine until stop is called or the test
// ends. stop cancels fn's context and returns what fn returned, or an error when fn did not
// return within 30 s; a second call returns the same.
func Run(t testing.TB, fn func(ctx context.Context) error) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- fn(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(30 * time.Second):
				err = fmt.Errorf("did not return within 30 s of its context ending")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}
