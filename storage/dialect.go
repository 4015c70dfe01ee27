package storage

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// dialect is what differs between the SQL of the two backends. The store's queries are written
// once, in SQLite's spelling with ? placeholders; a dialect rewrites the placeholders and supplies
// the few statements and expressions that have no common spelling (JSON access for lists, the
// event id high-water mark, the case-blind user name, the query plan).
type dialect struct {
	// name is "sqlite" or "postgres".
	name string
	// numbered tells that placeholders are $1, $2, … instead of ?.
	numbered bool
	// writeLock, when not empty, runs first in every write transaction so that writers queue one
	// after the other, across processes, as SQLite's single writer makes them.
	writeLock string
	// lastEventID reads the highest event id ever stored (no row: 0).
	lastEventID string
	// clock, when not empty, reads the database server's time (Store.Now); empty: this
	// process's clock.
	clock string
	// userNameIs is the condition that a user's name equals the parameter, regardless of ASCII case.
	userNameIs string
	// noLimit is the LIMIT argument that means "no limit".
	noLimit any
	// snapshot are the options of a read-only transaction that reads one snapshot.
	snapshot sql.TxOptions
	// migrations are the schema steps of this backend (the same versions on both).
	migrations []string
	// match and order are the JSON conditions and sort terms of lists (store_list.go).
	match func(key string, v any) (string, []any)
	order func(key, dir string) ([]string, []any)
	// explain returns the query plan of a SELECT.
	explain func(ctx context.Context, q dbq, query string, args []any) (string, error)
}

// rebind rewrites the ? placeholders of query for the dialect. A ? inside a quoted string or
// identifier is left alone.
func (d *dialect) rebind(query string) string {
	if !d.numbered || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// sqlRunner is a *sql.DB, *sql.Conn or *sql.Tx.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// dbq runs queries written in the store's common spelling (? placeholders) through a database
// handle or a transaction, in the dialect of the store.
type dbq struct {
	x sqlRunner
	d *dialect
}

// ExecContext runs a statement.
func (q dbq) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.x.ExecContext(ctx, q.d.rebind(query), args...)
}

// QueryContext runs a query.
func (q dbq) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.x.QueryContext(ctx, q.d.rebind(query), args...)
}

// QueryRowContext runs a query of at most one row.
func (q dbq) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.x.QueryRowContext(ctx, q.d.rebind(query), args...)
}

// boolInt is the integer a boolean is stored as (the active column is an INTEGER on both).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
