package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
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

// TestRestartOfAStoppedRecordReleasesItsLease: in a cluster, a restart (an update) of a record
// running here that was stopped meanwhile through another node, before its stop notification
// came, stops it and does not start it again; its lease goes back instead of being renewed
// here for nothing (it counted against this node's room and kept the record off the others).
func TestRestartOfAStoppedRecordReleasesItsLease(t *testing.T) {
	url := pgtest.StartTest(t).NewDatabase(t)
	st, err := storage.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := ParseConfig("sluice", []string{"--store", url, "--data", dir, "--cluster-node-id", "n1",
		"--cluster-renew", "2s", "--cluster-lease-ttl", "10s", "--cluster-cpu=false"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	runs := &fakeRunners{started: map[string]int{}}
	log := slog.New(slog.DiscardHandler)
	m := NewManager(st, runs.factory, dir, log)
	cl, err := openCluster(ctx, cfg, st, m, log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Node().Close() }()
	m.cl = cl
	p := &storage.Player{VodName: "live", VodPort: 40011, Input: storage.Input{InputType: kinds.InputGenerateVideo}}
	p.ID, p.Active, p.Created, p.Modified = storage.NewID(), true, time.Now(), time.Now()
	if err := st.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	locked := func(f func() error) error {
		unlock, err := m.Lock(ctx, storage.ModuleVOD, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		return f()
	}
	if err := locked(func() error { return m.Start(ctx, storage.ModuleVOD, p.ID) }); err != nil || m.get(storage.ModuleVOD, p.ID) == nil {
		t.Fatalf("start: %v", err)
	}
	if o, ok, err := cl.Node().OwnerOf(ctx, p.ID); err != nil || !ok || o.Node != "n1" {
		t.Fatalf("owner after the start: %+v, %v, %v", o, ok, err)
	}
	// Stopped through another node: the store says inactive; its notification has not come.
	if err := st.SetActive(ctx, storage.ModuleVOD, p.ID, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := locked(func() error { return m.Restart(ctx, storage.ModuleVOD, p.ID) }); err != nil {
		t.Fatal(err)
	}
	if m.get(storage.ModuleVOD, p.ID) != nil {
		t.Fatal("a stopped record started again by a restart")
	}
	if o, ok, err := cl.Node().OwnerOf(ctx, p.ID); err != nil || ok {
		t.Fatalf("after the restart of a stopped record: owner %+v, %v, %v; want its lease released", o, ok, err)
	}
	m.StopAll(ctx)
}
