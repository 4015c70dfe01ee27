package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/metrics"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/record"
	"github.com/sluicemedia/sluice/storage"
)

// Pipeline is what a running record is made of: the Stream its input publishes into, and the
// parts that run, each under its own supervisor (the input first, then the sinks).
type Pipeline struct {
	// Stream is the process's stream; nil for server modules.
	Stream *stream.Stream
	// Input is the part that publishes into Stream; nil when a server module publishes it.
	Input *Part
	// Sinks read from Stream: packagers, outputs, recorders.
	Sinks []Part
	// Streams lists a server module's published streams for getActiveStreams.
	Streams func() []api.ActiveStream
	// Memory returns what a memory recording holds as one MP4, without copying it (nil:
	// nothing yet).
	Memory func() *record.MemoryFile
	// Close releases what the pipeline owns once every part stopped.
	Close func()
	// Figures add what the pipeline's parts report to a metrics scrape (player, recording,
	// transcoding, server module streams); each reads state the parts keep anyway.
	Figures []func(*metrics.Process)
}

// Part is one supervised piece of a pipeline.
type Part struct {
	Name string
	Run  supervisor.RunFunc
	// Links reports the part's SRT connections now (nil: it has none).
	Links func() []api.SRTLink
}

// RunnerFactory builds the pipeline of a stored record.
type RunnerFactory func(rec storage.Record) (*Pipeline, error)

// running is a pipeline and the supervisors of its parts. The supervisors are built before the
// running is published to the Manager's map and never change, so status and stat may read
// them at any time; start and stop are serialised, and a stop that comes first wins.
type running struct {
	key     procKey
	name    string // the record's unique name when it started
	p       *Pipeline
	sups    []*supervisor.Supervisor // input (if any) first; read-only after newRunning
	started time.Time                // when the running was built; read-only

	life    sync.Mutex // serialises start and stop
	stopped bool

	// Events: emit (nil: none) gets the process's state changes and input up/down; quiet
	// mutes them once a stop begins (Manager.Stop sends the one "stopped").
	emit                 emitter
	about                about
	quiet                atomic.Bool
	evMu                 sync.Mutex // orders the state events; guards lastState, lastErr
	lastState, lastErr   string
	watchDone, watchStop chan struct{} // the input watcher's end, and its stop signal
}

// newRunning builds the supervisors of p's parts, none started yet.
func newRunning(p *Pipeline, name string, opts func(part string) supervisor.Options) *running {
	parts := p.Sinks
	if p.Input != nil {
		parts = append([]Part{*p.Input}, parts...)
	}
	r := &running{p: p, name: name, started: time.Now()}
	for _, part := range parts {
		r.sups = append(r.sups, supervisor.New(name+"/"+part.Name, part.Run, opts(part.Name)))
	}
	return r
}

// start starts every part; after stop it does nothing.
func (r *running) start() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.stopped {
		return
	}
	if r.emit != nil && r.p.Stream != nil {
		r.watchStop, r.watchDone = make(chan struct{}), make(chan struct{})
		go r.watchInput()
	}
	for _, s := range r.sups {
		s.Start()
	}
}

// observe sends a state event when the combined state or its last error changed; the parts'
// supervisors call it (OnChange) and so does the input watcher.
func (r *running) observe() {
	if r.emit == nil || r.quiet.Load() {
		return
	}
	r.evMu.Lock()
	defer r.evMu.Unlock()
	st := r.status()
	if st.State == r.lastState && st.LastError == r.lastErr {
		return
	}
	r.lastState, r.lastErr = st.State, st.LastError
	r.emit.emit(r.about.event(events.State, map[string]any{"state": st.State, "last_error": st.LastError, "restarts": st.Restarts}))
}

// watchInput sends input_up and input_down as a publisher attaches to and leaves the
// process's Stream, until stop.
func (r *running) watchInput() {
	defer close(r.watchDone)
	was := false
	for {
		pub, changed := r.p.Stream.WatchPublishing()
		if pub != was {
			was = pub
			typ := events.InputDown
			if pub {
				typ = events.InputUp
			}
			if !r.quiet.Load() {
				r.emit.emit(r.about.event(typ, nil))
			}
			r.observe()
		}
		select {
		case <-changed:
			if pub2, _ := r.p.Stream.WatchPublishing(); pub2 == pub {
				// Closed stream: the channel stays closed; do not spin.
				select {
				case <-time.After(100 * time.Millisecond):
				case <-r.watchStop:
					return
				}
			}
		case <-r.watchStop:
			return
		}
	}
}

// stop stops the parts, sinks first, and waits for each to return (its goroutines, children
// and sockets released), then releases the pipeline. Only the first call does anything.
func (r *running) stop() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	r.quiet.Store(true)
	if r.watchStop != nil {
		close(r.watchStop)
		<-r.watchDone
	}
	for i := len(r.sups) - 1; i >= 0; i-- {
		r.sups[i].Stop()
	}
	if r.p.Close != nil {
		r.p.Close()
	}
}

// status combines the parts: failed if any failed, reconnecting if any waits for a retry,
// then what the input says; a running input is "waiting" until media flows into the Stream.
func (r *running) status() api.Status {
	runs := make([]supervisor.Status, len(r.sups))
	for i, s := range r.sups {
		runs[i] = s.Status()
	}
	c := supervisor.Combine(runs)
	if c.State == supervisor.Running && r.p.Stream != nil && !r.p.Stream.Publishing() {
		c.State = supervisor.Waiting
	}
	if c.Since.IsZero() {
		c.Since = r.started
	}
	return api.Status{State: string(c.State), Since: c.Since, LastError: c.LastError, Restarts: c.Restarts}
}

// stat reports the input's live figures.
func (r *running) stat() api.Stat {
	if r.p.Stream == nil {
		return api.Stat{}
	}
	s := r.p.Stream.Stats()
	out := api.Stat{Bitrate: s.Bitrate, FPS: s.FPS, BytesIn: s.BytesIn, Discontinuities: s.Discontinuities}
	if s.Publishing && !s.Since.IsZero() {
		out.UptimeSec = time.Since(s.Since).Seconds()
	}
	parts := r.p.Sinks
	if r.p.Input != nil {
		parts = append([]Part{*r.p.Input}, parts...)
	}
	for _, p := range parts {
		if p.Links != nil {
			out.SRT = append(out.SRT, p.Links()...)
		}
	}
	return out
}

// streams lists a server module's published streams.
func (r *running) streams(context.Context) []api.ActiveStream {
	if r.p.Streams == nil {
		return []api.ActiveStream{}
	}
	return r.p.Streams()
}
