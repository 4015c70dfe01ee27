package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// fakeProcs records what the API asks of the running side.
type fakeProcs struct {
	mu      sync.Mutex
	calls   []string
	busy    map[storage.PortKey]bool
	check   func(storage.Record) error
	status  map[string]Status
	stat    map[string]Stat
	streams []ActiveStream
	content map[string][]byte // recorded file id → bytes on "disk"
	memory  []byte
	// memoryOpens counts the MemoryMP4 calls; memoryHold, when set, makes each reader's
	// first read wait until it is closed.
	memoryOpens atomic.Int64
	memoryHold  chan struct{}
	startFn     func(id string) error
	locks       sync.Map // record → *sync.Mutex
}

var _ Processes = (*fakeProcs)(nil)

func newFakeProcs() *fakeProcs {
	return &fakeProcs{busy: map[storage.PortKey]bool{}, status: map[string]Status{}, stat: map[string]Stat{}, content: map[string][]byte{}}
}

func (p *fakeProcs) record(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf(format, args...))
}

// took returns the calls so far and forgets them.
func (p *fakeProcs) took() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

func (p *fakeProcs) Check(_ context.Context, r storage.Record) error {
	p.record("check %s", r.Module())
	if p.check != nil {
		return p.check(r)
	}
	return nil
}

func (p *fakeProcs) PortBusy(k storage.PortKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy[k]
}

// Lock serialises each record as the Manager does; it is not recorded among the calls.
func (p *fakeProcs) Lock(_ context.Context, m storage.Module, id string) (func(), error) {
	v, _ := p.locks.LoadOrStore(string(m)+"/"+id, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}

func (p *fakeProcs) Start(_ context.Context, m storage.Module, id string) error {
	p.record("start %s %s", m, id)
	if p.startFn != nil {
		return p.startFn(id)
	}
	return nil
}

func (p *fakeProcs) Stop(_ context.Context, m storage.Module, id string) error {
	p.record("stop %s %s", m, id)
	return nil
}

func (p *fakeProcs) Restart(_ context.Context, m storage.Module, id string) error {
	p.record("restart %s %s", m, id)
	return nil
}

func (p *fakeProcs) Remove(_ context.Context, m storage.Module, id string) error {
	p.record("remove %s %s", m, id)
	return nil
}

func (p *fakeProcs) Status(_ storage.Module, id string) Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status[id]
}

func (p *fakeProcs) Stat(_ storage.Module, id string) Stat {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stat[id]
}

func (p *fakeProcs) ActiveStreams(_ context.Context, m storage.Module, id string) ([]ActiveStream, error) {
	p.record("streams %s %s", m, id)
	return p.streams, nil
}

func (p *fakeProcs) RemoveFile(_ context.Context, f storage.RecordedFile) error {
	p.record("removefile %s", f.ID)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.content, f.ID)
	return nil
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

func (p *fakeProcs) OpenFile(_ context.Context, f storage.RecordedFile) (io.ReadSeekCloser, time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.content[f.ID]
	if !ok {
		return nil, time.Time{}, fmt.Errorf("open %s: %w", f.Path, storage.ErrNotFound)
	}
	return nopCloser{bytes.NewReader(b)}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), nil
}

func (p *fakeProcs) MemoryMP4(_ context.Context, id string) (io.ReadSeeker, error) {
	// memoryHold is read once, before the open is counted: the test changes it once it saw
	// the opens it waits for (reading it twice let a reader get the nil it was changed to, and
	// wait on it for ever).
	hold := p.memoryHold
	p.memoryOpens.Add(1)
	if hold != nil {
		return &heldReader{ReadSeeker: bytes.NewReader(p.memory), hold: hold}, nil
	}
	return bytes.NewReader(p.memory), nil
}

// heldReader is a client reading a download slowly: its reads wait until hold is closed.
type heldReader struct {
	io.ReadSeeker
	hold chan struct{}
}

func (h *heldReader) Read(b []byte) (int, error) {
	<-h.hold
	return h.ReadSeeker.Read(b)
}

// fakeUtils serves canned utility results.
type fakeUtils struct {
	stat     any
	speedErr error
	ports    []storage.PortKey
}

func (u *fakeUtils) ServerStat(context.Context) (any, error) { return u.stat, nil }

func (u *fakeUtils) SpeedTest(context.Context) (any, error) {
	if u.speedErr != nil {
		return nil, u.speedErr
	}
	return map[string]any{"timestamp": time.Date(2026, 11, 21, 14, 2, 3, 123456789, time.FixedZone("X", 3600)), "isp": "test"}, nil
}

func (u *fakeUtils) ListeningPorts(context.Context) ([]storage.PortKey, error) { return u.ports, nil }
