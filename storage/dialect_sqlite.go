package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(numberFunc, 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			s, ok := args[0].(string)
			if !ok {
				return nil, nil
			}
			if x, ok := NumberText(s); ok {
				return x, nil
			}
			return nil, nil
		})
}

// sqliteDialect is the SQL of the embedded SQLite store, the default.
var sqliteDialect = &dialect{
	name:        "sqlite",
	lastEventID: `SELECT seq FROM sqlite_sequence WHERE name = 'events'`,
	userNameIs:  `name = ?`, // the column is COLLATE NOCASE
	noLimit:     -1,
	snapshot:    sql.TxOptions{ReadOnly: true},
	migrations:  migrations,
	match:       sqliteMatch,
	order:       sqliteOrder,
	explain:     sqliteExplain,
}

// sqliteJSONPath is the SQLite JSON path of a top-level key (already checked by ValidListKey).
func sqliteJSONPath(key string) string { return `$."` + key + `"` }

// sqliteMatch is the condition that the document's key equals v (nil, bool, float64 or string).
func sqliteMatch(key string, v any) (string, []any) {
	p := sqliteJSONPath(key)
	isNum := `json_type(doc, ?) IN ('integer', 'real') AND json_extract(doc, ?) = ?`
	isText := `json_type(doc, ?) = 'text' AND json_extract(doc, ?) = ?`
	switch v := v.(type) {
	case nil:
		return `COALESCE(json_type(doc, ?), 'null') = 'null'`, []any{p}
	case bool:
		return `json_type(doc, ?) = ?`, []any{p, strconv.FormatBool(v)}
	case float64:
		return `((` + isNum + `) OR (json_type(doc, ?) = 'text' AND ` + numberFunc + `(json_extract(doc, ?)) = ?))`,
			[]any{p, p, v, p, p, v}
	case string:
		if x, ok := NumberText(v); ok {
			return `((` + isText + `) OR (` + isNum + `))`, []any{p, p, v, p, p, x}
		}
		return `(` + isText + `)`, []any{p, p, v}
	}
	panic("storage: sqliteMatch of an unchecked value") // filterSQL lets only the kinds above through
}

// sqliteOrder are the sort terms of key: its kind, then its value (json_extract gives a value of
// one SQLite type per kind).
func sqliteOrder(key, dir string) ([]string, []any) {
	p := sqliteJSONPath(key)
	return []string{
		`CASE json_type(doc, ?) WHEN 'true' THEN 1 WHEN 'false' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2
				WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 4 ELSE 0 END ` + dir,
		`CASE WHEN json_type(doc, ?) IN ('true', 'false', 'integer', 'real', 'text') THEN json_extract(doc, ?) END ` + dir,
	}, []any{p, p, p}
}

// sqliteExplain is SQLite's EXPLAIN QUERY PLAN of query, one step a line.
func sqliteExplain(ctx context.Context, q dbq, query string, args []any) (string, error) {
	rows, err := q.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		b.WriteString(detail + "\n")
	}
	return b.String(), rows.Err()
}
