package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema steps in order; migration i brings the schema to version i+1. Append
// new steps; never edit or reorder one that has shipped.
var migrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE records (
	id       TEXT PRIMARY KEY,
	module   TEXT NOT NULL,
	name     TEXT NOT NULL,
	active   INTEGER NOT NULL DEFAULT 0,
	created  TEXT NOT NULL,
	modified TEXT NOT NULL,
	doc      TEXT NOT NULL,
	UNIQUE (module, name)
);
CREATE INDEX records_module_created ON records (module, created, id);
CREATE INDEX records_active ON records (active, created, id);

CREATE TABLE port_claims (
	id          TEXT PRIMARY KEY,
	port        INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
	transport   TEXT NOT NULL CHECK (transport IN ('TCP', 'UDP')),
	module      TEXT NOT NULL,
	entity_id   TEXT NOT NULL,
	entity_name TEXT NOT NULL,
	created     TEXT NOT NULL,
	UNIQUE (port, transport)
);
CREATE INDEX port_claims_entity ON port_claims (module, entity_id);

CREATE TABLE recorded_files (
	id        TEXT PRIMARY KEY,
	record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
	created   TEXT NOT NULL,
	state     TEXT NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX recorded_files_record ON recorded_files (record_id, created, id);
CREATE INDEX recorded_files_state ON recorded_files (state, created, id);

CREATE TABLE users (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL COLLATE NOCASE UNIQUE,
	password_hash TEXT NOT NULL,
	created       TEXT NOT NULL
);

CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE revoked_tokens (
	jti TEXT PRIMARY KEY,
	exp TEXT NOT NULL
);
CREATE INDEX revoked_tokens_exp ON revoked_tokens (exp);
`,
	// 2: the event history (issue 14) and the webhooks' outbox. AUTOINCREMENT: an id is never
	// used twice, even once every event was pruned, so event ids grow across restarts.
	`
CREATE TABLE events (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	type      TEXT NOT NULL,
	time      TEXT NOT NULL,
	module    TEXT NOT NULL,
	record_id TEXT NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX events_time ON events (time);

CREATE TABLE webhook_deliveries (
	id           TEXT PRIMARY KEY,
	webhook_id   TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
	event_id     INTEGER NOT NULL,
	type         TEXT NOT NULL,
	body         TEXT NOT NULL,
	state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	created      TEXT NOT NULL,
	next_at      TEXT NOT NULL,
	last_attempt TEXT NOT NULL DEFAULT '',
	last_error   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, state, last_attempt);
`,
	// 3: nothing on SQLite. PostgreSQL's step 3 makes the nodes and leases of several nodes on one
	// database (issue 17), which a SQLite file, one process's, never has; the step is here so
	// that both lists keep the same version numbers.
	`SELECT 1`,
	// 4: nothing on SQLite either: PostgreSQL's step 4 adds the owner's process state to the
	// leases (issue 17, the wiring).
	`SELECT 1`,
	// 5: the node whose disk holds a recorded file (issue 17, downloads through any node). A
	// SQLite store has one node, whose files all are: the column stays empty, as on PostgreSQL
	// for files written before a node was named.
	`ALTER TABLE recorded_files ADD COLUMN node TEXT NOT NULL DEFAULT ''`,
	// 6: the removals of recorded files that another node holds (DeleteFile), queued for that
	// node. A SQLite store's files are all its own, so nothing is ever queued here; the table is
	// made on both so that DeleteFile reads the same on each.
	`
CREATE TABLE file_removals (
	file_id   TEXT PRIMARY KEY,
	node      TEXT NOT NULL,
	record_id TEXT NOT NULL,
	queued    TEXT NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX file_removals_node ON file_removals (node, queued, file_id);
`,
}

// migrate applies the migrations of d that db has not seen yet, each in its own transaction, and
// returns how many it applied. A database from a newer sluice (more migrations than this one
// knows) is refused rather than used.
func migrate(ctx context.Context, db *sql.DB, d *dialect) (int, error) {
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		applied TEXT NOT NULL
	)`
	var err error
	if d.writeLock == "" {
		// SQLite: on its own, as before. (In a BEGIN IMMEDIATE transaction, processes opening a
		// new file at once could fail with SQLITE_BUSY while another one set up its WAL.)
		_, err = db.ExecContext(ctx, create)
	} else {
		// PostgreSQL: under the write lock, else two processes creating the table at once
		// could collide on its catalog entries.
		err = inTx(ctx, db, d, func(tx dbq) error {
			_, err := tx.ExecContext(ctx, create)
			return err
		})
	}
	if err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	var newest int
	if err := (dbq{db, d}).QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if newest > len(d.migrations) {
		return 0, fmt.Errorf("schema version %d is newer than this program knows (%d)",
			newest, len(d.migrations))
	}
	applied := 0
	for i, step := range d.migrations {
		version := i + 1
		ok, err := applyMigration(ctx, db, d, version, step)
		if err != nil {
			return applied, fmt.Errorf("migration %d: %w", version, err)
		}
		if ok {
			applied++
		}
	}
	return applied, nil
}

// applyMigration runs one step unless schema_migrations already lists its version. The check and
// the step share one write transaction, so two processes opening the same database cannot both
// run it.
func applyMigration(ctx context.Context, db *sql.DB, d *dialect, version int, step string) (bool, error) {
	ran := false
	err := inTx(ctx, db, d, func(tx dbq) error {
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		// The step itself goes unchanged (no placeholders; PostgreSQL function bodies hold '?').
		if _, err := tx.x.ExecContext(ctx, step); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`,
			version, formatTime(now())); err != nil {
			return err
		}
		ran = true
		return nil
	})
	return ran && err == nil, err
}

// inTx runs fn in a write transaction on db (after the dialect's write lock) and commits it when
// fn succeeds.
func inTx(ctx context.Context, db *sql.DB, d *dialect, fn func(tx dbq) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if d.writeLock != "" {
		if _, err := tx.ExecContext(ctx, d.writeLock); err != nil {
			return fmt.Errorf("take the write lock: %w", err)
		}
	}
	if err := fn(dbq{tx, d}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
