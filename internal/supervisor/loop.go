package supervisor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// loop runs attempts until ctx ends or one fails permanently, then closes done.
func (s *Supervisor) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	log := s.opts.Logger
	bo := newBackoff(s.opts.Initial, s.opts.Max)
	first := Starting
	for {
		stable, err := s.attempt(ctx, first)
		if ctx.Err() != nil {
			return
		}
		if stable {
			bo.reset()
		}
		if err == nil {
			err = errUnexpectedExit
		}
		first = Starting
		switch {
		case IsPermanent(err):
			log.Error("failed permanently", "error", err)
			s.change(func(st *Status) { st.State, st.LastError = Failed, err.Error() })
			return
		case errors.Is(err, ErrInputGone):
			log.Info("input gone; waiting for it", "error", err)
			s.change(func(st *Status) { st.State = Waiting })
			first = Waiting
			continue
		}
		delay := bo.next()
		var restarts int
		s.change(func(st *Status) {
			st.State, st.LastError = Reconnecting, err.Error()
			st.Restarts++
			restarts = st.Restarts
		})
		log.Warn("failed; restarting", "error", err, "restarts", restarts, "backoff", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// attempt calls the RunFunc once, starting in state first, and tells whether the attempt
// stayed Running for StableAfter. A panic in the RunFunc is returned as an error.
func (s *Supervisor) attempt(ctx context.Context, first State) (stable bool, err error) {
	s.mu.Lock()
	s.current++
	rep := &reporter{s: s, attempt: s.current}
	s.stable = false
	if !s.stopping {
		s.changeLocked(func(st *Status) { st.State = first })
	}
	s.mu.Unlock()
	s.deliver()

	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("run panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
		s.mu.Lock()
		s.current++ // orphans rep
		stable = s.stable || (s.status.State == Running &&
			time.Since(s.runningSince) >= s.opts.StableAfter)
		s.mu.Unlock()
	}()
	return false, s.run(ctx, rep)
}

// change is changeLocked and deliver for the loop; it does nothing while Stop is under way.
func (s *Supervisor) change(f func(*Status)) {
	s.mu.Lock()
	if !s.stopping {
		s.changeLocked(f)
	}
	s.mu.Unlock()
	s.deliver()
}

// reporter is the Reporter of one attempt.
type reporter struct {
	s       *Supervisor
	attempt uint64
}

// SetState records Waiting or Running for the attempt, if it is still the current one.
func (r *reporter) SetState(state State) {
	s := r.s
	if state != Waiting && state != Running {
		s.opts.Logger.Debug("ignored reported state", "state", state)
		return
	}
	s.mu.Lock()
	if r.attempt != s.current || s.stopping {
		s.mu.Unlock()
		return
	}
	prev := s.status.State
	now := time.Now()
	switch {
	case state == Running && prev != Running:
		s.runningSince = now
	case state != Running && prev == Running && now.Sub(s.runningSince) >= s.opts.StableAfter:
		s.stable = true
	}
	s.changeLocked(func(st *Status) { st.State = state })
	s.mu.Unlock()
	s.deliver()
}
