package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/sluicemedia/sluice/internal/redact"
)

// The PostgreSQL connections of one Store, in three pools as on SQLite: writers waiting for the
// write lock never hold the connections reads need, and AuthRevision never waits behind reads.
const (
	// pgWriteConns is the most connections the writes use.
	pgWriteConns = 4
	// pgReadConns is the most connections the reads use.
	pgReadConns = 8
	// pgConnectTimeout bounds Open's first connection and migrations.
	pgConnectTimeout = 30 * time.Second
	// pgIdleTime is how long an unused connection stays open.
	pgIdleTime = 5 * time.Minute
)

// IsPostgresURL tells whether target names a PostgreSQL database (postgres:// or
// postgresql://) rather than a SQLite file.
func IsPostgresURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// OpenTarget opens the store target names: a PostgreSQL URL (OpenPostgres) or a SQLite file
// path (Open).
func OpenTarget(target string) (*Store, error) {
	if IsPostgresURL(target) {
		return OpenPostgres(target)
	}
	return Open(target)
}

// OpenPostgres opens the PostgreSQL database at dbURL (postgres://user:password@host:port/db?…,
// every libpq setting pgx reads allowed) and brings its schema up to date, with the same
// migration versions as a SQLite store. The database must exist; the user needs to create
// tables in it. Several sluice processes may share one database: their writes queue on an
// advisory lock (pgWriteLockKey) as a SQLite file's writers queue on its lock.
//
// What is SQLite's alone: the file permissions (Warnings is empty) and the diagnosis of a full
// disk (NoSpaceError): PostgreSQL's disk is the server's, and its errors come back as they are.
func OpenPostgres(dbURL string) (*Store, error) {
	where := redact.URL(dbURL)
	s := &Store{path: where, d: postgresDialect}
	var err error
	for _, p := range []struct {
		db    **sql.DB
		conns int
	}{{&s.w, pgWriteConns}, {&s.r, pgReadConns}, {&s.a, 1}} {
		if *p.db, err = sql.Open("pgx", dbURL); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("storage: open %s: %w", where, redact.Error(err, dbURL))
		}
		(*p.db).SetMaxOpenConns(p.conns)
		(*p.db).SetMaxIdleConns(p.conns)
		(*p.db).SetConnMaxIdleTime(pgIdleTime)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
	defer cancel()
	if err := s.w.PingContext(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: open %s: %w", where, redact.Error(err, dbURL))
	}
	if s.migrated, err = migrate(ctx, s.w, s.d); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: %s: %w", where, redact.Error(err, dbURL))
	}
	return s, nil
}
