package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// blockUntilDone reports the given states, then runs until ctx ends.
func blockUntilDone(states ...State) RunFunc {
	return func(ctx context.Context, rep Reporter) error {
		for _, st := range states {
			rep.SetState(st)
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// failFirst returns a RunFunc whose first n runs end with fail's error and whose later ones
// do then, and the count of its runs.
func failFirst(n int32, fail func(Reporter) error, then RunFunc) (RunFunc, *atomic.Int32) {
	calls := new(atomic.Int32)
	return func(ctx context.Context, rep Reporter) error {
		if calls.Add(1) <= n {
			return fail(rep)
		}
		return then(ctx, rep)
	}, calls
}

func TestStateSequence(t *testing.T) {
	defer goleak.VerifyNone(t)
	var rec recorder
	s := New("seq", blockUntilDone(Waiting, Running), Options{Logger: quietLogger(), OnChange: rec.add})
	if got := s.Status().State; got != Stopped {
		t.Fatalf("new supervisor is %s, want stopped", got)
	}
	s.Start()
	defer s.Stop()
	s.Start() // idempotent
	eventually(t, 5*time.Second, "running", stateIs(s, Running))
	s.Stop()
	s.Stop() // idempotent

	want := []State{Starting, Waiting, Running, Stopped}
	if got := rec.states(); !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	st := s.Status()
	if st.Restarts != 0 || st.LastError != "" {
		t.Fatalf("status %+v, want no restarts and no error", st)
	}
}

func TestFailureCountsAndReconnects(t *testing.T) {
	defer goleak.VerifyNone(t)
	var rec recorder
	run, _ := failFirst(2, func(Reporter) error { return errors.New("dial rtmp://example: refused") }, blockUntilDone(Running))
	s := New("fail", run, Options{Logger: quietLogger(), OnChange: rec.add, Initial: time.Millisecond})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "running", stateIs(s, Running))
	s.Stop()

	want := []State{Starting, Reconnecting, Starting, Reconnecting, Starting, Running, Stopped}
	if got := rec.states(); !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	got := rec.all()
	if got[1].Restarts != 1 || got[3].Restarts != 2 {
		t.Fatalf("restarts %d then %d, want 1 then 2", got[1].Restarts, got[3].Restarts)
	}
	if st := s.Status(); st.LastError != "dial rtmp://example: refused" || st.Restarts != 2 {
		t.Fatalf("status %+v: want the last error kept and 2 restarts", st)
	}
}

func TestReturningNilIsAFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	run := func(context.Context, Reporter) error { return nil }
	s := New("nil", run, Options{Logger: quietLogger(), Initial: 10 * time.Second})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "reconnecting", stateIs(s, Reconnecting))
	if st := s.Status(); st.LastError != "exited unexpectedly" || st.Restarts != 1 {
		t.Fatalf("status %+v", st)
	}
}

func TestPanicIsAFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	run := func(context.Context, Reporter) error { panic("index out of range") }
	s := New("panic", run, Options{Logger: quietLogger(), Initial: 10 * time.Second})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "reconnecting", stateIs(s, Reconnecting))
	if st := s.Status(); !strings.Contains(st.LastError, "panic: index out of range") {
		t.Fatalf("last error %q", st.LastError)
	}
}

func TestInputGoneDoesNotCount(t *testing.T) {
	defer goleak.VerifyNone(t)
	var rec recorder
	run, calls := failFirst(3, func(rep Reporter) error {
		rep.SetState(Running)
		return fmt.Errorf("srt: publisher left: %w", ErrInputGone)
	}, blockUntilDone(Waiting))
	// A counted failure would wait 10 s; the test would time out.
	s := New("gone", run, Options{Logger: quietLogger(), OnChange: rec.add, Initial: 10 * time.Second})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "fourth attempt", func() bool { return calls.Load() == 4 })
	s.Stop()

	want := []State{Starting, Running, Waiting, Running, Waiting, Running, Waiting, Stopped}
	if got := rec.states(); !slices.Equal(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	if st := s.Status(); st.Restarts != 0 || st.LastError != "" {
		t.Fatalf("status %+v, want no restarts and no error", st)
	}
}

func TestPermanentFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls atomic.Int32
	run := func(context.Context, Reporter) error {
		calls.Add(1)
		return Permanent(fmt.Errorf("parse url %q: bad scheme", "rtmpx://a"))
	}
	s := New("perm", run, Options{Logger: quietLogger(), Initial: time.Millisecond})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "failed", stateIs(s, Failed))
	time.Sleep(50 * time.Millisecond)
	s.Start() // Failed lasts until Stop
	time.Sleep(20 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	st := s.Status()
	if st.State != Failed || st.LastError != `parse url "rtmpx://a": bad scheme` || st.Restarts != 0 {
		t.Fatalf("status %+v", st)
	}

	s.Stop()
	if got := s.Status().State; got != Stopped {
		t.Fatalf("after Stop: %s", got)
	}
	s.Start()
	eventually(t, 5*time.Second, "failed again", stateIs(s, Failed))
	s.Stop()
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d runs after a restart, want 2", n)
	}
}

func TestStopDuringBackoff(t *testing.T) {
	defer goleak.VerifyNone(t)
	run := func(context.Context, Reporter) error { return errors.New("boom") }
	s := New("backoff", run, Options{Logger: quietLogger(), Initial: 10 * time.Second})
	// Stop must not wait for the backoff; the best of three tries absorbs a loaded machine.
	best := time.Hour
	for range 3 {
		s.Start()
		eventually(t, 5*time.Second, "reconnecting", stateIs(s, Reconnecting))
		begin := time.Now()
		s.Stop()
		best = min(best, time.Since(begin))
		if got := s.Status().State; got != Stopped {
			t.Fatalf("after Stop: %s", got)
		}
	}
	if best > 100*time.Millisecond {
		t.Fatalf("Stop took %v during a 10 s backoff", best)
	}
}

func TestStableRunResetsBackoff(t *testing.T) {
	const initial = 20 * time.Millisecond
	for _, tc := range []struct {
		name        string
		stableAfter time.Duration
		running     time.Duration // how long the third attempt stays Running
		want        time.Duration // the backoff after it
	}{
		{"stable", 50 * time.Millisecond, 100 * time.Millisecond, initial},
		{"unstable", 10 * time.Second, 20 * time.Millisecond, 4 * initial},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			var (
				calls atomic.Int32
				logs  backoffLog
			)
			run := func(ctx context.Context, rep Reporter) error {
				switch calls.Add(1) {
				case 1, 2: // backoffs initial, then 2×initial
					return errors.New("refused")
				case 3: // next backoff 4×initial, unless this run was stable
					rep.SetState(Running)
					time.Sleep(tc.running)
					return errors.New("broken pipe")
				}
				return blockUntilDone(Running)(ctx, rep)
			}
			s := New(tc.name, run, Options{Logger: logs.logger(), Initial: initial, StableAfter: tc.stableAfter})
			s.Start()
			defer s.Stop()
			eventually(t, 5*time.Second, "fourth attempt", func() bool { return calls.Load() == 4 })
			s.Stop()
			want := []time.Duration{initial, 2 * initial, tc.want}
			if got := logs.all(); !slices.Equal(got, want) {
				t.Fatalf("backoffs %v, want %v", got, want)
			}
		})
	}
}

func TestOnChangeMayCallStatus(t *testing.T) {
	defer goleak.VerifyNone(t)
	var (
		rec recorder
		s   *Supervisor
	)
	run, _ := failFirst(1, func(rep Reporter) error {
		rep.SetState(Waiting)
		return errors.New("first")
	}, blockUntilDone(Waiting, Running))
	s = New("onchange", run, Options{
		Logger:  quietLogger(),
		Initial: time.Millisecond,
		OnChange: func(st Status) {
			_ = s.Status() // must not deadlock
			rec.add(st)
		},
	})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "running", stateIs(s, Running))
	s.Stop()

	got := rec.all()
	want := []State{Starting, Waiting, Reconnecting, Starting, Waiting, Running, Stopped}
	if states := rec.states(); !slices.Equal(states, want) {
		t.Fatalf("states %v, want %v", states, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Since.Before(got[i-1].Since) {
			t.Fatalf("Since went back at %d: %v", i, got)
		}
	}
	if got[2].LastError != "first" || got[2].Restarts != 1 {
		t.Fatalf("reconnecting status %+v", got[2])
	}
}

func TestStaleReporterIgnored(t *testing.T) {
	defer goleak.VerifyNone(t)
	reps := make(chan Reporter, 1)
	run := func(ctx context.Context, rep Reporter) error {
		select {
		case reps <- rep:
		default:
		}
		return blockUntilDone(Waiting)(ctx, rep)
	}
	s := New("stale", run, Options{Logger: quietLogger()})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "waiting", stateIs(s, Waiting))
	s.Stop()
	rep := <-reps
	rep.SetState(Running)
	if got := s.Status().State; got != Stopped {
		t.Fatalf("a report after Stop moved the state to %s", got)
	}
	s.Start()
	eventually(t, 5*time.Second, "waiting", stateIs(s, Waiting))
	rep.SetState(Running) // the first run's reporter
	if got := s.Status().State; got != Waiting {
		t.Fatalf("an old attempt's report moved the state to %s", got)
	}
	s.Stop()
}

func TestStartClearsStatus(t *testing.T) {
	defer goleak.VerifyNone(t)
	run, _ := failFirst(1, func(Reporter) error { return errors.New("boom") }, blockUntilDone(Waiting))
	s := New("clear", run, Options{Logger: quietLogger(), Initial: 10 * time.Second})
	s.Start()
	defer s.Stop()
	eventually(t, 5*time.Second, "reconnecting", stateIs(s, Reconnecting))
	s.Stop()
	if st := s.Status(); st.LastError != "boom" || st.Restarts != 1 {
		t.Fatalf("Stop should keep the last error: %+v", st)
	}
	s.Start()
	st := s.Status()
	s.Stop()
	if (st.State != Starting && st.State != Waiting) || st.LastError != "" || st.Restarts != 0 {
		t.Fatalf("after Start: %+v", st)
	}
}

func TestConcurrentStartStopStatus(t *testing.T) {
	defer goleak.VerifyNone(t)
	var changes atomic.Int64
	run := func(ctx context.Context, rep Reporter) error {
		rep.SetState(Waiting)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
		rep.SetState(Running)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
			return errors.New("flaky")
		}
	}
	var s *Supervisor
	s = New("race", run, Options{
		Logger:   quietLogger(),
		Initial:  time.Millisecond,
		Max:      2 * time.Millisecond,
		OnChange: func(Status) { changes.Add(1); _ = s.Status() },
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				switch (g + i) % 3 {
				case 0:
					s.Start()
				case 1:
					s.Stop()
				default:
					_ = s.Status()
				}
			}
		})
	}
	wg.Wait()
	s.Stop()
	if got := s.Status().State; got != Stopped {
		t.Fatalf("after Stop: %s", got)
	}
	if changes.Load() == 0 {
		t.Fatal("no change seen")
	}
}
