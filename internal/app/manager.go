package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/api"
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
	bind   string
	log    *slog.Logger
	booted time.Time
	// emit gets the processes' state events (nil: none).
	emit emitter
	// cl, with a PostgreSQL store, is this server's cluster node: a record runs here only under
	// its lease (nil: a single node, everything runs here).
	cl *clusterNode

	// locks serialise the lifecycle of each record (Lock).
	locks lifeLocks

	mu        sync.Mutex
	procs     map[procKey]*running
	stoppedAt map[procKey]time.Time
	// names are the unique names of the processes started since boot, until removed: a
	// scrape reports the stopped ones as stopped.
	names    map[procKey]string
	closed   bool           // StopAll ran: nothing starts any more
	stopping sync.WaitGroup // Stop calls still waiting for their pipeline, for StopAll
}

var _ api.Processes = (*Manager)(nil)

// NewManager returns a Manager with nothing running.
func NewManager(st *storage.Store, runners RunnerFactory, recDir string, log *slog.Logger) *Manager {
	return &Manager{
		store: st, runners: runners, recDir: recDir, log: log, booted: time.Now(),
		procs: map[procKey]*running{}, stoppedAt: map[procKey]time.Time{}, names: map[procKey]string{},
	}
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

// Check implements api.Processes: it refuses what this server cannot run.
func (m *Manager) Check(_ context.Context, rec storage.Record) error {
	var tc *storage.Transcoding
	switch r := rec.(type) {
	case *storage.Player:
		tc = r.Transcoding
	case *storage.Restream:
		tc = r.Transcoding
	case *storage.Recording:
		tc = r.Transcoding
	}
	if m.checkOutputs != nil {
		if err := m.checkOutputs(rec); err != nil {
			return err
		}
	}
	if m.checkTranscoding != nil {
		return m.checkTranscoding(tc)
	}
	return nil
}

// PortBusy implements api.Processes: it tries to bind the port where a listener of a record
// would bind it (--media-bind; every interface by default).
func (m *Manager) PortBusy(k storage.PortKey) bool {
	addr := net.JoinHostPort(m.bind, strconv.Itoa(k.Port))
	if k.Transport == storage.UDP {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return true
		}
		pc.Close()
		return false
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	l.Close()
	return false
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
	if m.isClosed() {
		return ErrShuttingDown
	}
	if m.cl != nil {
		if here, err := m.cl.claim(ctx, mod, id, rec, place); err != nil || !here {
			return err
		}
	}
	p, err := m.runners(rec)
	if err != nil && m.cl != nil {
		m.cl.released(ctx, id)
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
	m.mu.Lock()
	_, dup := m.procs[key]
	closed := m.closed
	if !dup && !closed {
		m.procs[key] = run
		m.names[key] = run.name
		delete(m.stoppedAt, key)
	}
	m.mu.Unlock()
	if dup || closed {
		if p.Close != nil {
			p.Close()
		}
		if closed && m.cl != nil {
			m.cl.released(ctx, id)
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

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
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
		return m.cl.tell(ctx, opStop, mod, id, "")
	}
	m.cl.released(ctx, id)
	return nil
}

// fence stops a record whose lease this node lost, at once: another node may run it already.
func (m *Manager) fence(mod storage.Module, id string) {
	if m.stop(mod, id) {
		m.log.Warn("cluster: record stopped: its lease was lost", "module", string(mod), "id", id)
	}
}

// stop stops the process of a record here, and tells whether one ran.
func (m *Manager) stop(mod storage.Module, id string) bool {
	key := procKey{mod, id}
	m.mu.Lock()
	run := m.procs[key]
	delete(m.procs, key)
	m.stoppedAt[key] = time.Now()
	if run != nil {
		m.stopping.Add(1)
	}
	m.mu.Unlock()
	if run != nil {
		defer m.stopping.Done()
		run.stop()
		m.emit.emit(run.about.event(events.State, map[string]any{"state": string(supervisor.Stopped), "last_error": "", "restarts": 0}))
	}
	return run != nil
}

// Restart implements api.Processes: a running process restarts with its stored settings. The
// caller holds the record's Lock. In a cluster it restarts on the node that runs it (told by
// NOTIFY when that is another node), under a new lease generation.
func (m *Manager) Restart(ctx context.Context, mod storage.Module, id string) error {
	if m.get(mod, id) == nil {
		if m.cl != nil {
			return m.cl.tell(ctx, opRestart, mod, id, "")
		}
		return nil
	}
	m.stop(mod, id)
	return m.start(ctx, mod, id, false)
}

// Remove implements api.Processes: Stop, and the process's status is forgotten. The caller
// holds the record's Lock. In a cluster the owner is told; the lease goes with the record.
func (m *Manager) Remove(ctx context.Context, mod storage.Module, id string) error {
	var err error
	if m.cl != nil && !m.stop(mod, id) {
		err = m.cl.tell(ctx, opRemove, mod, id, "")
	} else {
		m.stop(mod, id)
	}
	m.mu.Lock()
	delete(m.stoppedAt, procKey{mod, id})
	delete(m.names, procKey{mod, id})
	m.mu.Unlock()
	return err
}

// Status implements api.Processes.
func (m *Manager) Status(mod storage.Module, id string) api.Status {
	key := procKey{mod, id}
	m.mu.Lock()
	run := m.procs[key]
	since, ok := m.stoppedAt[key]
	m.mu.Unlock()
	if run == nil && m.cl != nil {
		if st, remote := m.cl.remoteStatus(mod, id); remote {
			return st
		}
	}
	if run == nil {
		if !ok {
			since = m.booted
		}
		return api.Status{State: string(supervisor.Stopped), Since: since}
	}
	return run.status()
}

func (m *Manager) get(mod storage.Module, id string) *running {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.procs[procKey{mod, id}]
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
func (m *Manager) Running() []procKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]procKey, 0, len(m.procs))
	for k := range m.procs {
		out = append(out, k)
	}
	return out
}

// StopAll stops every process in parallel, and waits for them and for the stops already under
// way, at most until ctx ends. From then on Start refuses with ErrShuttingDown.
func (m *Manager) StopAll(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	runs := make([]*running, 0, len(m.procs))
	for k, r := range m.procs {
		runs = append(runs, r)
		delete(m.procs, k)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			r.stop()
			m.emit.emit(r.about.event(events.State, map[string]any{"state": string(supervisor.Stopped), "last_error": "", "restarts": 0}))
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		m.stopping.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		m.log.Warn("processes still stopping at the shutdown deadline", "count", len(runs))
	}
}

// recPath confines a stored relative path to the recordings folder.
func (m *Manager) recPath(rel string) (string, error) {
	clean := filepath.Clean("/" + rel)
	p := filepath.Join(m.recDir, clean)
	if !strings.HasPrefix(p, filepath.Clean(m.recDir)+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q escapes the recordings folder: %w", rel, storage.ErrNotFound)
	}
	return p, nil
}

// RemoveFile implements api.Processes. A file already gone is not an error.
func (m *Manager) RemoveFile(_ context.Context, f storage.RecordedFile) error {
	p, err := m.recPath(f.Path)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", f.Path, err)
	}
	if m.emit != nil {
		name := recordName(context.Background(), m.store, storage.RecordRef{Module: storage.ModuleRecording, ID: f.RecordID})
		m.emit.emit(fileEvent(events.FileRemoved, f.RecordID, name, f))
	}
	return nil
}

// OpenFile implements api.Processes.
func (m *Manager) OpenFile(_ context.Context, f storage.RecordedFile) (io.ReadSeekCloser, time.Time, error) {
	p, err := m.recPath(f.Path)
	if err != nil {
		return nil, time.Time{}, err
	}
	fh, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, time.Time{}, fmt.Errorf("recorded file %s: %w", f.Path, storage.ErrNotFound)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, time.Time{}, err
	}
	return fh, st.ModTime(), nil
}

// MemoryMP4 implements api.Processes.
func (m *Manager) MemoryMP4(_ context.Context, id string) (io.ReadSeeker, error) {
	if r := m.get(storage.ModuleRecording, id); r != nil && r.p.Memory != nil {
		if b := r.p.Memory(); len(b) > 0 {
			return bytes.NewReader(b), nil
		}
	}
	return nil, fmt.Errorf("memory recording %s holds nothing yet (it is stopped, or no key frame has arrived): %w", id, storage.ErrNotFound)
}

// recordName is the unique name of a stored record, for logs; empty when it cannot be read.
func recordName(ctx context.Context, st *storage.Store, ref storage.RecordRef) string {
	rec, err := newRecord(ref.Module)
	if err != nil || st.Get(ctx, ref.Module, ref.ID, rec) != nil {
		return ""
	}
	return rec.UniqueName()
}
