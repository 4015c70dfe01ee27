package soak

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// LaneResult counts what one lane's publisher did.
type LaneResult struct {
	Lane    string
	Cycles  int   // connect, send, drop cycles completed
	Retries int   // attempts refused or broken, then tried again
	Failed  int   // cycles given up after every attempt
	LastErr error // the last attempt's error, if any
}

// cycleAttempts is how many times a cycle is tried before it counts as failed: a listen
// input may still hold the previous peer for a moment after it hung up.
const cycleAttempts = 3

// cycleLength is the clip length a cycle sends: 1 to 2 s in steps of 250 ms, so that drops
// fall at every point of a GOP.
func cycleLength(i int64) time.Duration {
	return time.Second + time.Duration(i%5)*250*time.Millisecond
}

// RunCycles runs n publisher connect/send/drop cycles spread over the lanes, each lane's
// publisher taking the next cycle as soon as its previous one ended (and its gap passed), so
// faster lanes do more. done, when not nil, is updated with the cycles completed.
func RunCycles(ctx context.Context, lanes []*Lane, clip *Clip, n int, done *atomic.Int64, log *slog.Logger) []LaneResult {
	var next atomic.Int64
	results := make([]LaneResult, len(lanes))
	var wg sync.WaitGroup
	for li, lane := range lanes {
		results[li].Lane = lane.Name
		wg.Go(func() {
			res := &results[li]
			for ctx.Err() == nil {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				ok := false
				for attempt := 1; attempt <= cycleAttempts && ctx.Err() == nil; attempt++ {
					err := Publish(ctx, lane.Target, clip, cycleLength(i), false, log)
					if err == nil {
						ok = true
						break
					}
					res.LastErr = err
					log.Debug("cycle attempt failed", "lane", lane.Name, "cycle", i, "attempt", attempt, "err", err)
					if attempt < cycleAttempts {
						res.Retries++
						sleep(ctx, time.Second)
					}
				}
				if ok {
					res.Cycles++
					if done != nil {
						done.Add(1)
					}
				} else if ctx.Err() == nil {
					res.Failed++
				}
				sleep(ctx, lane.Gap)
			}
		})
	}
	wg.Wait()
	return results
}

// String summarises the lane's result.
func (r LaneResult) String() string {
	s := fmt.Sprintf("%-22s %4d cycles", r.Lane, r.Cycles)
	if r.Retries > 0 || r.Failed > 0 {
		s += fmt.Sprintf(", %d retried, %d failed (last: %v)", r.Retries, r.Failed, r.LastErr)
	}
	return s
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
