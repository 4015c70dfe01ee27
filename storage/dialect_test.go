package storage

import (
	"context"
	"database/sql"
	"sync"
	"testing"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT 1`:                               `SELECT 1`,
		`a = ? AND b IN (?, ?)`:                  `a = $1 AND b IN ($2, $3)`,
		`x = '?' AND "col?" = ? AND y = 'it''s'`: `x = '?' AND "col?" = $1 AND y = 'it''s'`,
		`json(?) || '$.a' || ?`:                  `json($1) || '$.a' || $2`,
	} {
		if got := postgresDialect.rebind(in); got != want {
			t.Errorf("rebind(%s) = %s, want %s", in, got, want)
		}
		if got := sqliteDialect.rebind(in); got != in {
			t.Errorf("SQLite rebind changed %s to %s", in, got)
		}
	}
}

// TestConcurrentOpenMigratesOnce: several processes opening a new database at once (nodes
// starting together) all open it, and each migration runs once.
//
// On SQLite the file is first put in WAL mode alone: switching a brand-new file to WAL takes a
// lock no busy timeout waits for, so opens of a file that does not exist yet can fail with
// SQLITE_BUSY when they race (as before the PostgreSQL store; one server and `sluice passwd` never
// do). The migrations then race as they would on a file an older sluice made.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	target := NewTestTarget(t)
	if !IsPostgresURL(target) {
		db, err := sql.Open("sqlite", dsn(target, "_journal_mode=WAL"))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		_ = db.Close()
	}
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = OpenTarget(target)
		}()
	}
	wg.Wait()
	applied := 0
	for i, s := range stores {
		if errs[i] != nil {
			t.Errorf("open %d: %v", i, errs[i])
			continue
		}
		applied += s.migrated
		defer s.Close()
	}
	if applied != len(migrations) {
		t.Errorf("%d migrations applied in all, want %d (each once)", applied, len(migrations))
	}
	if t.Failed() {
		return
	}
	var rows int
	if err := stores[0].read().QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != len(migrations) {
		t.Errorf("schema_migrations has %d rows, %v; want %d", rows, err, len(migrations))
	}
}
