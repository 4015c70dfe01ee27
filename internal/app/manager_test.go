package app

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// TestManagerStartRules: under its lock, a start runs only an active record that exists;
// an inactive one is left alone, a gone one is an error wrapping storage.ErrNotFound, and
// after StopAll nothing starts (ErrShuttingDown, answered 503).
func TestManagerStartRules(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	runs := &fakeRunners{started: map[string]int{}}
	m := NewManager(st, runs.factory, t.TempDir(), slog.New(slog.DiscardHandler))
	player := func(name string, port int, active bool) string {
		p := &storage.Player{VodName: name, VodPort: port, Input: storage.Input{InputType: kinds.InputGenerateVideo}}
		p.ID, p.Active, p.Created, p.Modified = storage.NewID(), active, time.Now(), time.Now()
		if err := st.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	start := func(id string) error {
		unlock, err := m.Lock(ctx, storage.ModuleVOD, id)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		return m.Start(ctx, storage.ModuleVOD, id)
	}

	inactive := player("idle", 40001, false)
	if err := start(inactive); err != nil || m.get(storage.ModuleVOD, inactive) != nil {
		t.Fatalf("start of an inactive record: %v, running %v", err, m.get(storage.ModuleVOD, inactive) != nil)
	}
	if err := start(storage.NewID()); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("start of a record that is gone: %v, want ErrNotFound", err)
	}
	active := player("live", 40002, true)
	if err := start(active); err != nil || m.get(storage.ModuleVOD, active) == nil {
		t.Fatalf("start of an active record: %v", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m.StopAll(sctx)
	if m.get(storage.ModuleVOD, active) != nil {
		t.Fatal("a process still listed after StopAll")
	}
	late := player("late", 40003, true)
	if err := start(late); !errors.Is(err, ErrShuttingDown) || !errors.Is(err, api.ErrNotAvailable) {
		t.Fatalf("start after StopAll: %v, want ErrShuttingDown (503)", err)
	}
	if n := runs.count(inactive) + runs.count(late); n != 0 {
		t.Fatalf("records that should not run ran %d times", n)
	}
	if m.locks.size() != 0 {
		t.Fatalf("%d lifecycle locks left", m.locks.size())
	}
}
