package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// pruneEvery is how often the server forgets revoked tokens that have expired (they fail
// validation on their expiry alone): at start, then every pruneEvery.
const pruneEvery = time.Hour

// revokedPruner is the part of the store the pruner uses.
type revokedPruner interface {
	PruneRevoked(ctx context.Context, now time.Time) (int, error)
}

// startPruning forgets expired revoked tokens now and every interval until the returned stop
// is called (stop waits for a prune in progress to end).
func startPruning(st revokedPruner, interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if n, err := st.PruneRevoked(ctx, time.Now()); err != nil && ctx.Err() == nil {
				log.Warn("cannot forget expired revoked tokens", "err", err)
			} else if n > 0 {
				log.Debug("forgot expired revoked tokens", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
