package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// busyTimeoutMS is how long a connection waits for a lock held by another connection (another
// Store on the same file, e.g. `sluice passwd` while the server runs) before SQLITE_BUSY.
const busyTimeoutMS = 10000

// Store keeps sluice's records in one SQLite file (Open, the default) or in a PostgreSQL
// database (OpenPostgres). It is safe for concurrent use. Both backends run the same queries
// through a dialect (dialect.go) and behave the same; what is SQLite's alone is said where it is.
//
// On SQLite, every write runs in a BEGIN IMMEDIATE transaction on a single writer connection, so
// writers of one process queue in Go instead of contending for SQLite's lock; reads use a
// separate pool of read-only connections and, thanks to WAL, never wait for the writer. On
// PostgreSQL one pool serves all, and writers queue on an advisory lock (pgWriteLockKey).
type Store struct {
	w *sql.DB
	r *sql.DB
	// a is one read connection of its own for AuthRevision, which a server may read at any
	// request: it never waits behind the pool's longer reads.
	a    *sql.DB
	path string
	// warnings are the exposures Open found (and narrowed where it could), for the operator.
	warnings []string
	// migrated is how many migrations Open applied (0 when the schema was already current).
	migrated int
	// d is the SQL dialect of the backend.
	d *dialect
	// revocations counts the revocations this Store committed: the revocation stamp of a
	// PostgreSQL store, which has no file beside it.
	revocations atomic.Int64
	// node is the cluster node this store serves (SetNode): the node of the files it adds.
	node atomic.Pointer[string]
}

// SetNode names the cluster node this store serves (issue 17): the files it adds from then on
// are that node's (RecordedFile.Node), and FilesInState lists that node's only. Empty, the
// default, is a single node's store.
func (s *Store) SetNode(id string) { s.node.Store(&id) }

// nodeID is the name SetNode gave, or "".
func (s *Store) nodeID() string {
	if p := s.node.Load(); p != nil {
		return *p
	}
	return ""
}

// Open opens, creating it if needed, the database file at path and brings its schema up to date.
// A missing folder is created 0700 and a missing file 0600; an existing store file, -wal or -shm
// wider than 0600 is narrowed to it, and Warnings reports that and a folder open to other users.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("storage: empty database path")
	}
	warnings, err := preparePrivate(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	s := &Store{path: path, warnings: warnings, d: sqliteDialect}
	s.w, err = sql.Open("sqlite", dsn(path,
		"_journal_mode=WAL", "_synchronous=NORMAL", "_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)

	ctx := context.Background()
	if s.migrated, err = migrate(ctx, s.w, s.d); err != nil {
		_ = s.w.Close()
		return nil, fmt.Errorf("storage: %s: %w", path, err)
	}

	s.r, err = sql.Open("sqlite", dsn(path, "_query_only=1"))
	if err != nil {
		_ = s.w.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	if err := s.r.PingContext(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	s.a, err = sql.Open("sqlite", dsn(path, "_query_only=1"))
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	s.a.SetMaxOpenConns(1)
	s.a.SetMaxIdleConns(1)
	s.a.SetConnMaxLifetime(0)
	s.a.SetConnMaxIdleTime(0)
	return s, nil
}

// Warnings are sentences for the operator about exposures Open found: a data folder other users
// may enter, a store file they could read before Open narrowed it. Log them at start.
func (s *Store) Warnings() []string { return s.warnings }

// Backend names the store's database engine: "sqlite" or "postgres".
func (s *Store) Backend() string { return s.d.name }

// Close closes the database. The Store must not be used afterwards.
func (s *Store) Close() error {
	var errs []error
	closed := map[*sql.DB]bool{}
	for _, db := range []*sql.DB{s.a, s.r, s.w} {
		if db != nil && !closed[db] {
			closed[db] = true
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage: close %s: %w", s.path, err)
	}
	return nil
}

// dsn builds the driver's data source name: a file: URI (so that '?' or '#' in the path are
// harmless) with the settings every connection needs, plus extra.
func dsn(path string, extra ...string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	params := append([]string{
		fmt.Sprintf("_busy_timeout=%d", busyTimeoutMS),
		"_foreign_keys=1",
	}, extra...)
	return "file:" + esc + "?" + strings.Join(params, "&")
}

// write runs fn in a write transaction and commits it when fn succeeds: on SQLite a BEGIN
// IMMEDIATE transaction on the writer connection (fn must use only tx: the writer has one
// connection), on PostgreSQL one that first takes the dialect's write lock, so that writers of
// every process queue as on SQLite. A SQLite write that fails for lack of space returns a
// *NoSpaceError (errors.Is ErrNoSpace).
func (s *Store) write(ctx context.Context, fn func(tx dbq) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.noSpace(fmt.Errorf("storage: begin: %w", err))
	}
	if s.d.writeLock != "" {
		if _, err := tx.ExecContext(ctx, s.d.writeLock); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("storage: take the write lock: %w", err)
		}
	}
	if err := fn(dbq{tx, s.d}); err != nil {
		_ = tx.Rollback()
		return s.noSpace(err)
	}
	if err := tx.Commit(); err != nil {
		return s.noSpace(fmt.Errorf("storage: commit: %w", err))
	}
	return nil
}

// read is the read pool in the store's dialect.
func (s *Store) read() dbq { return dbq{s.r, s.d} }

// timeLayout stores times as fixed-width UTC text with nanoseconds, so that text order is time
// order and nothing is lost.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// formatTime returns t in UTC in timeLayout.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTime reads a time written by formatTime.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("storage: bad stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// now is the current time in UTC at the millisecond precision the API uses.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
