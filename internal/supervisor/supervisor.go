// Package supervisor is the one restart loop of sluice. A Supervisor runs a RunFunc (a player,
// a restream, a recording, a pull input, an ffmpeg job) until it is stopped, restarts it with
// exponential backoff when it fails, and reports its State for the API. Command runs a child
// process in its own process group so that a stop leaves no orphan.
package supervisor

import (
	"context"
	"sync"
	"time"
)

// Reporter is given to a RunFunc so it can say how far it got: Waiting (for its input) or
// Running (media flowing). Other states are ignored, and so are reports after the run's
// context ended.
type Reporter interface {
	SetState(State)
}

// RunFunc is one attempt. It runs until ctx ends (and then returns nil or ctx.Err()) or until
// it fails (and returns the error). An error wrapping ErrInputGone restarts at once; one marked
// by Permanent is not retried; any other error, or nil while ctx is live, is a failure retried
// after a backoff. It must wait for the goroutines it starts before returning.
type RunFunc func(ctx context.Context, rep Reporter) error

// Supervisor runs a RunFunc again and again until Stop. Its methods are safe for concurrent
// use.
type Supervisor struct {
	name string
	run  RunFunc
	opts Options

	life   sync.Mutex // serialises Start and Stop
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop returned; nil while stopped

	mu           sync.Mutex
	status       Status
	stopping     bool      // Stop is under way: the loop's and reporters' changes are dropped
	current      uint64    // the current attempt; reports of older ones are ignored
	runningSince time.Time // when the current attempt last entered Running
	stable       bool      // the current attempt stayed Running for StableAfter
	pending      []Status  // changes not yet logged and given to OnChange
	delivering   bool      // a goroutine is calling OnChange
}

// New returns a stopped Supervisor for run; name appears in its logs.
func New(name string, run RunFunc, opts Options) *Supervisor {
	opts = opts.withDefaults()
	opts.Logger = opts.Logger.With("supervisor", name)
	return &Supervisor{
		name:   name,
		run:    run,
		opts:   opts,
		status: Status{State: Stopped, Since: time.Now()},
	}
}

// Start begins running in state Starting, with LastError and Restarts cleared. It does nothing
// if the supervisor is already started, Failed included: Failed lasts until Stop.
func (s *Supervisor) Start() {
	s.life.Lock()
	if s.done != nil {
		s.life.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	s.mu.Lock()
	s.changeLocked(func(st *Status) {
		st.State, st.LastError, st.Restarts = Starting, "", 0
	})
	s.mu.Unlock()
	go s.loop(ctx, s.done)
	s.life.Unlock()
	s.opts.Logger.Info("started")
	s.deliver()
}

// Stop cancels the run, waits until the RunFunc (and so every goroutine it owns) returned,
// and leaves the supervisor Stopped. During a backoff it returns at once. It does nothing if
// the supervisor is stopped.
func (s *Supervisor) Stop() {
	s.life.Lock()
	if s.done == nil {
		s.life.Unlock()
		return
	}
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
	s.cancel, s.done = nil, nil
	s.mu.Lock()
	s.stopping = false
	s.changeLocked(func(st *Status) { st.State = Stopped })
	s.mu.Unlock()
	s.life.Unlock()
	s.opts.Logger.Info("stopped")
	s.deliver()
}

// Status returns a snapshot of the current status.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Name returns the name given to New.
func (s *Supervisor) Name() string { return s.name }
