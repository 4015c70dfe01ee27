package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// openNewTarget opens a store on a new test target and returns it with the target, for tests
// that close it and open the target again.
func openNewTarget(t *testing.T) (*Store, string) {
	t.Helper()
	path := NewTestTarget(t)
	s, err := OpenTarget(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openNewTarget(t)
	if s.migrated != len(migrations) {
		t.Errorf("first Open applied %d migrations, want %d", s.migrated, len(migrations))
	}
	p := &Player{Base: Base{ID: NewID()}, VodName: "lobby", VodPort: 8000}
	if err := s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	var applied string
	if err := s.read().QueryRowContext(ctx, `SELECT MAX(applied) FROM schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := OpenTarget(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.migrated != 0 {
		t.Errorf("reopen applied %d migrations, want 0", s.migrated)
	}
	var n int
	var again string
	if err := s.read().QueryRowContext(ctx, `SELECT COUNT(*), MAX(applied) FROM schema_migrations`).Scan(&n, &again); err != nil {
		t.Fatal(err)
	}
	if n != len(migrations) || again != applied {
		t.Errorf("schema_migrations: %d rows, applied %q; want %d, %q", n, again, len(migrations), applied)
	}
	got, err := Load[Player](ctx, s, ModuleVOD, p.ID)
	if err != nil || got.VodName != "lobby" {
		t.Errorf("after reopen: %+v, %v", got, err)
	}
	if _, ok, _ := s.PortHolder(ctx, PortKey{Port: 8000, Transport: TCP}); !ok {
		t.Error("port claim lost on reopen")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	s, path := openNewTarget(t)
	if _, err := (dbq{s.w, s.d}).ExecContext(ctx, `INSERT INTO schema_migrations (version, applied) VALUES (?, 'later')`,
		len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := OpenTarget(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a newer schema: %v", err)
		if s != nil {
			s.Close()
		}
	}
}

func TestConnectionSettings(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "a?b#c%d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	if err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	for _, q := range []*sql.DB{s.w, s.r} {
		var fk, busy int
		if err := q.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
			t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
		}
		if err := q.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != busyTimeoutMS {
			t.Errorf("busy_timeout = %d, %v; want %d", busy, err, busyTimeoutMS)
		}
	}
	if _, err := s.r.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('x', 'y')`); err == nil {
		t.Error("the read pool accepted a write")
	}
}
