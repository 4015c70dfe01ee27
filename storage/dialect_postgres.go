package storage

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// pgWriteLockKey is the PostgreSQL advisory lock every write transaction takes first (any fixed
// number; it reads "sluice" in ASCII): writes of every sluice on the database queue one after
// the other, as they do on SQLite's single writer, so a read-then-write in a transaction (a port
// claim, SettingOrInit, ClaimDue) sees no concurrent change.
const pgWriteLockKey = 0x736c75696365

// postgresDialect is the SQL of the PostgreSQL store (--store postgres://…).
var postgresDialect = &dialect{
	name:        "postgres",
	numbered:    true,
	writeLock:   `SELECT pg_advisory_xact_lock(` + strconv.Itoa(pgWriteLockKey) + `)`,
	lastEventID: `SELECT id FROM events_last_id`,
	clock:       `SELECT now()`,
	userNameIs:  pgASCIILower(`name`) + ` = ` + pgASCIILower(`?::text`),
	noLimit:     nil, // LIMIT NULL
	snapshot:    sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
	migrations:  pgMigrations,
	match:       pgMatch,
	order:       pgOrder,
	explain:     pgExplain,
}

// pgASCIILower folds the ASCII capitals of a text expression, and nothing else: SQLite's NOCASE,
// which the user name column of the SQLite store has.
func pgASCIILower(expr string) string {
	return `translate(` + expr + `, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`
}

// pgMatch is the condition that the document's key equals v (nil, bool, float64 or string).
// Documents are stored as text (their bytes as sluice wrote them) and read as jsonb here.
// sluice_number (a migration) reads the text of a number, or of a string holding one, as SQLite's
// sluice_number and NumberText do.
func pgMatch(key string, v any) (string, []any) {
	kind := `jsonb_typeof(doc::jsonb -> ?::text)`
	text := `(doc::jsonb ->> ?::text)`
	isNum := `CASE WHEN ` + kind + ` = 'number' THEN sluice_number` + text + ` END = ?::float8`
	isText := `CASE WHEN ` + kind + ` = 'string' THEN ` + text + ` END = ?::text`
	switch v := v.(type) {
	case nil:
		return `COALESCE(` + kind + `, 'null') = 'null'`, []any{key}
	case bool:
		return `CASE WHEN ` + kind + ` = 'boolean' THEN ` + text + ` END = ?::text`, []any{key, key, strconv.FormatBool(v)}
	case float64:
		return `((` + isNum + `) OR (CASE WHEN ` + kind + ` = 'string' THEN sluice_number` + text + ` END = ?::float8))`,
			[]any{key, key, v, key, key, v}
	case string:
		if x, ok := NumberText(v); ok {
			return `((` + isText + `) OR (` + isNum + `))`, []any{key, key, v, key, key, x}
		}
		return `(` + isText + `)`, []any{key, key, v}
	}
	panic("storage: pgMatch of an unchecked value") // filterSQL lets only the kinds above through
}

// pgOrder are the sort terms of key: its kind, then its value as a boolean, a number or a string
// in byte order (COLLATE "C", as SQLite compares text), each term NULL outside its kind.
func pgOrder(key, dir string) ([]string, []any) {
	kind := `jsonb_typeof(doc::jsonb -> ?::text)`
	text := `(doc::jsonb ->> ?::text)`
	return []string{
		`CASE ` + kind + ` WHEN 'boolean' THEN 1 WHEN 'number' THEN 2 WHEN 'string' THEN 3
				WHEN 'object' THEN 4 WHEN 'array' THEN 4 ELSE 0 END ` + dir,
		`CASE WHEN ` + kind + ` = 'boolean' THEN ` + text + `::boolean END ` + dir,
		`CASE WHEN ` + kind + ` = 'number' THEN sluice_number` + text + ` END ` + dir,
		`CASE WHEN ` + kind + ` = 'string' THEN ` + text + ` COLLATE "C" END ` + dir,
	}, []any{key, key, key, key, key, key, key}
}

// pgExplain is PostgreSQL's EXPLAIN of query, one plan line a line.
func pgExplain(ctx context.Context, q dbq, query string, args []any) (string, error) {
	rows, err := q.QueryContext(ctx, `EXPLAIN `+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}
