package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/storage"
)

type procKey struct {
	m  storage.Module
	id string
}

// Manager turns stored records into supervised running processes. It implements api.Processes.
type Manager struct {
	store   *storage.Store
	runners RunnerFactory
	// checkTranscoding refuses a transcoding object this server cannot run (nil: accept all).
	checkTranscoding func(*storage.Transcoding) error
	// checkOutputs refuses an output that cannot carry the input's known codecs (nil: accept all).
	checkOutputs func(storage.Record) error
	recDir       string
	// bind is the host that players and listen inputs bind (--media-bind); empty: every
	// interface. PortBusy tries the same address.
	bind string
	log  *slog.Logger
	// emit gets the processes' state events (nil: none).
	emit emitter
	// cl, with a PostgreSQL store, is this server's cluster node: a record runs here only under
	// its lease (nil: a single node, everything runs here).
	cl *clusterNode

	// locks serialise the lifecycle of each record (Lock).
	locks lifeLocks
	// procs are the processes running, and those stopped since boot until removed.
	procs *supervisor.Table[procKey, *running]
}

var _ api.Processes = (*Manager)(nil)

// NewManager returns a Manager with nothing running.
func NewManager(st *storage.Store, runners RunnerFactory, recDir string, log *slog.Logger) *Manager {
	return &Manager{store: st, runners: runners, recDir: recDir, log: log, procs: supervisor.NewTable[procKey, *running]()}
}

// newRecord returns an empty record of the module, to load into.
func newRecord(m storage.Module) (storage.Record, error) {
	switch m {
	case storage.ModuleVOD:
		return &storage.Player{}, nil
	case storage.ModuleRestream:
		return &storage.Restream{}, nil
	case storage.ModuleRecording:
		return &storage.Recording{}, nil
	case storage.ModuleSRTServers:
		return &storage.SRTServer{}, nil
	case storage.ModuleRTMPServers:
		return &storage.RTMPServer{}, nil
	}
	return nil, fmt.Errorf("module %q has no processes", m)
}

// Lock implements api.Processes: it waits for the lifecycle lock of one record. Create,
// update, start, stop and remove of a record hold it across their store write and the process
// action, so that a start cannot run behind a remove's back.
func (m *Manager) Lock(ctx context.Context, mod storage.Module, id string) (func(), error) {
	return m.locks.lock(ctx, procKey{mod, id})
}

// Start implements api.Processes: it runs the stored record under a supervisor. The caller
// holds the record's Lock. Starting a running process does nothing; so does starting a record
// that is not active (a stop or update won the race); a record that is gone is an error
// wrapping storage.ErrNotFound, and nothing runs. In a cluster the record goes to the node
// placement picks, and runs only under its lease.
func (m *Manager) Start(ctx context.Context, mod storage.Module, id string) error {
	return m.start(ctx, mod, id, true)
}

// start is Start; place false takes the lease here without asking placement (the record was
// placed here).
func (m *Manager) start(ctx context.Context, mod storage.Module, id string, place bool) error {
	key := procKey{mod, id}
	if m.get(mod, id) != nil {
		return nil
	}
	rec, err := newRecord(mod)
	if err != nil {
		return err
	}
	if err := m.store.Get(ctx, mod, id, rec); err != nil {
		return fmt.Errorf("start %s %s: %w", mod, id, err)
	}
	if !rec.Meta().Active {
		m.log.Debug("start skipped: the record is not active", "module", string(mod), "id", id, "name", rec.UniqueName())
		return nil
	}
	if m.procs.Closed() {
		return ErrShuttingDown
	}
	if m.cl != nil {
		if here, err := m.cl.Claim(ctx, clusterRef(mod, id), affinityOf(rec), place); err != nil || !here {
			return err
		}
	}
	p, err := m.runners(rec)
	if err != nil && m.cl != nil {
		m.cl.Released(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("%s %q: %w", mod, rec.UniqueName(), err)
	}
	log := m.log.With("module", string(mod), "id", id, "name", rec.UniqueName())
	var run *running
	run = newRunning(p, rec.UniqueName(), func(part string) supervisor.Options {
		// The supervisors start after run is set (run.start).
		return supervisor.Options{Logger: log.With("part", part), OnChange: func(supervisor.Status) { run.observe() }}
	})
	run.key = key
	run.emit, run.about = m.emit, about{mod, id, rec.UniqueName()}
	if dup, closed := m.procs.Add(key, run, run.name); dup || closed {
		if p.Close != nil {
			p.Close()
		}
		if closed && m.cl != nil {
			m.cl.Released(ctx, id)
		}
		if closed {
			return ErrShuttingDown
		}
		return nil
	}
	// A StopAll that took run meanwhile has stopped it; start then does nothing.
	run.start()
	return nil
}

// Stop implements api.Processes: it returns once the process's parts returned, its children
// were reaped and its sockets closed. The caller holds the record's Lock. Stopping a stopped
// process does nothing. In a cluster the lease is handed back; a record running on another
// node is stopped by its owner, told by NOTIFY.
func (m *Manager) Stop(ctx context.Context, mod storage.Module, id string) error {
	if m.cl == nil {
		m.stop(mod, id)
		return nil
	}
	if !m.stop(mod, id) {
		m.cl.Tell(ctx, cluster.OpStop, clusterRef(mod, id), "")
		return nil
	}
	m.cl.Released(ctx, id)
	return nil
}

// stop stops the process of a record here, and tells whether one ran.
func (m *Manager) stop(mod storage.Module, id string) bool {
	run, ok, done := m.procs.Take(procKey{mod, id})
	defer done()
	if ok {
		m.stopRun(run)
	}
	return ok
}

// stopRun stops a process taken out of the table, and says so.
func (m *Manager) stopRun(run *running) {
	run.stop()
	m.emit.emit(run.about.event(events.State, map[string]any{"state": string(supervisor.Stopped), "last_error": "", "restarts": 0}))
}

// Restart implements api.Processes: a running process restarts with its stored settings. The
// caller holds the record's Lock. In a cluster it restarts on the node that runs it (told by
// NOTIFY when that is another node), under a new lease generation.
func (m *Manager) Restart(ctx context.Context, mod storage.Module, id string) error {
	if m.get(mod, id) == nil {
		if m.cl != nil {
			m.cl.Tell(ctx, cluster.OpRestart, clusterRef(mod, id), "")
		}
		return nil
	}
	m.stop(mod, id)
	err := m.start(ctx, mod, id, false)
	if m.cl != nil && m.get(mod, id) == nil {
		// Not started again (stopped through another node meanwhile, or it failed): the lease
		// taken for the run that ended goes back rather than being renewed here for nothing.
		m.cl.Released(ctx, id)
	}
	return err
}

// Remove implements api.Processes: Stop, and the process's status is forgotten. The caller
// holds the record's Lock. In a cluster the owner is told; the lease goes with the record.
func (m *Manager) Remove(ctx context.Context, mod storage.Module, id string) error {
	if !m.stop(mod, id) && m.cl != nil {
		m.cl.Tell(ctx, cluster.OpRemove, clusterRef(mod, id), "")
	}
	m.procs.Forget(procKey{mod, id})
	return nil
}

// Status implements api.Processes.
func (m *Manager) Status(mod storage.Module, id string) api.Status {
	key := procKey{mod, id}
	run, _ := m.procs.Get(key)
	if run == nil && m.cl != nil {
		if st, remote := m.cl.RemoteState(id); remote {
			return api.Status{State: st.State, Since: st.Since, LastError: st.LastError, Restarts: st.Restarts}
		}
	}
	if run == nil {
		return api.Status{State: string(supervisor.Stopped), Since: m.procs.StoppedSince(key)}
	}
	return run.status()
}

func (m *Manager) get(mod storage.Module, id string) *running {
	run, _ := m.procs.Get(procKey{mod, id})
	return run
}

// Stat implements api.Processes: the live figures of the process's input.
func (m *Manager) Stat(mod storage.Module, id string) api.Stat {
	if run := m.get(mod, id); run != nil {
		return run.stat()
	}
	return api.Stat{}
}

// ActiveStreams implements api.Processes: the streams published to a running server module.
func (m *Manager) ActiveStreams(ctx context.Context, mod storage.Module, id string) ([]api.ActiveStream, error) {
	if run := m.get(mod, id); run != nil {
		return run.streams(ctx), nil
	}
	return []api.ActiveStream{}, nil
}

// Running lists the processes that have a supervisor now.
func (m *Manager) Running() []procKey { return m.procs.Keys() }

// StopAll stops every process in parallel, and waits for them and for the stops already under
// way, at most until ctx ends. From then on Start refuses with ErrShuttingDown.
func (m *Manager) StopAll(ctx context.Context) {
	runs := m.procs.Close()
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { m.stopRun(r) })
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
	}
	if ctx.Err() != nil || !m.procs.Wait(ctx) {
		m.log.Warn("processes still stopping at the shutdown deadline", "count", len(runs))
	}
}
