package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ListQuery selects, orders and pages the documents of one module in the database (ListPage,
// Count), with the comparison rules of the API's lists (API.md "Lists"), so that only the page
// leaves the database.
type ListQuery struct {
	// Filter holds when every Match holds.
	Filter []Match
	// Sort orders by these keys in turn, then oldest first (created, id).
	Sort []SortKey
	// Skip is how many documents to pass over; Limit how many to return at most (< 0: all).
	Skip, Limit int
}

// Match holds when the document's top-level Key equals Value. Value is nil (matches a null or
// absent key), a bool, a float64 (matches a number, or a string holding a JSON number, of the
// same value; a json.Number or an int is read as one) or a string (matches the same string and, when it holds a JSON number, a number of
// that value).
type Match struct {
	Key   string
	Value any
}

// SortKey orders by a top-level key: null or absent first, then false, true, numbers by value,
// strings byte by byte, then objects and arrays (equal to each other); Desc reverses that.
type SortKey struct {
	Key  string
	Desc bool
}

// listKey is the form of a key a query may name: a plain JSON member name.
var listKey = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// ValidListKey tells whether key may be named in a ListQuery.
func ValidListKey(key string) bool { return listKey.MatchString(key) }

// numberFunc is the SQL function that reads a string holding a JSON number (spaces around it
// allowed) as its value, and anything else as NULL.
const numberFunc = "sluice_number"

// jsonNumberText is a JSON number literal.
var jsonNumberText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// NumberText reads a string holding a JSON number, spaces around it allowed; ok is false for
// anything else, and for a value out of float64's range.
func NumberText(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if !jsonNumberText.MatchString(s) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil && !math.IsInf(x, 0)
}

// ListPage returns the stored JSON documents of module m that q's filter selects, in q's order,
// after q.Skip and at most q.Limit of them.
func (s *Store) ListPage(ctx context.Context, m Module, q ListQuery) ([][]byte, error) {
	query, args, err := s.listSQL(m, q)
	if err != nil {
		return nil, err
	}
	return s.queryDocs(ctx, m, query, args...)
}

// queryDocs runs a query of module m's records that selects one column, doc, and returns the
// documents in its order.
func (s *Store) queryDocs(ctx context.Context, m Module, query string, args ...any) ([][]byte, error) {
	rows, err := s.read().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", m, err)
	}
	defer rows.Close()
	var docs [][]byte
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("storage: list %s: %w", m, err)
		}
		docs = append(docs, doc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", m, err)
	}
	return docs, nil
}

// listSQL is the SELECT of ListPage and its arguments.
func (s *Store) listSQL(m Module, q ListQuery) (string, []any, error) {
	where, args, err := filterSQL(s.d, m, q.Filter)
	if err != nil {
		return "", nil, err
	}
	order, oargs, err := orderSQL(s.d, q.Sort)
	if err != nil {
		return "", nil, err
	}
	var limit any = q.Limit
	if q.Limit < 0 {
		limit = s.d.noLimit
	}
	args = append(append(args, oargs...), limit, max(q.Skip, 0))
	return `SELECT doc FROM records WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`, args, nil
}

// Count returns how many documents of module m filter selects.
func (s *Store) Count(ctx context.Context, m Module, filter []Match) (int, error) {
	where, args, err := filterSQL(s.d, m, filter)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.read().QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("storage: count %s: %w", m, err)
	}
	return n, nil
}

// ExplainList returns the database's query plan for ListPage(m, q), one step a line, for tests
// and diagnosis.
func (s *Store) ExplainList(ctx context.Context, m Module, q ListQuery) (string, error) {
	query, args, err := s.listSQL(m, q)
	if err != nil {
		return "", err
	}
	plan, err := s.d.explain(ctx, s.read(), query, args)
	if err != nil {
		return "", fmt.Errorf("storage: explain list %s: %w", m, err)
	}
	return plan, nil
}

// filterSQL is the WHERE clause of a list of module m under filter, and its arguments. It checks
// and normalises each Match (numbers become float64) and leaves the JSON condition to d.
func filterSQL(d *dialect, m Module, filter []Match) (string, []any, error) {
	where := []string{"module = ?"}
	args := []any{string(m)}
	for _, f := range filter {
		if !ValidListKey(f.Key) {
			return "", nil, badListKey(f.Key)
		}
		val := f.Value
		switch v := val.(type) {
		case json.Number:
			x, ok := NumberText(v.String())
			if !ok {
				return "", nil, fmt.Errorf("storage: list filter %q: %q is not a finite number", f.Key, v.String())
			}
			val = x
		case int:
			val = float64(v)
		}
		switch v := val.(type) {
		case nil, bool, string:
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return "", nil, fmt.Errorf("storage: list filter %q: %v is not a finite number", f.Key, v)
			}
		default:
			return "", nil, fmt.Errorf("storage: list filter %q: a %T cannot be compared in the database", f.Key, v)
		}
		cond, cargs := d.match(f.Key, val)
		where = append(where, cond)
		args = append(args, cargs...)
	}
	return strings.Join(where, " AND "), args, nil
}

// orderSQL is the ORDER BY clause of sort, and its arguments. Each key orders first by kind
// (absent or null, booleans, numbers, strings, then objects and arrays), then by value within
// its kind (d's terms); id, created and modified use their columns. Ties stay oldest first.
func orderSQL(d *dialect, sort []SortKey) (string, []any, error) {
	var terms []string
	var args []any
	for _, k := range sort {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		switch k.Key {
		case "id", "created", "modified":
			// Text ids and fixed-width UTC times in byte order: text order is their order.
			terms = append(terms, k.Key+" "+dir)
			continue
		}
		if !ValidListKey(k.Key) {
			return "", nil, badListKey(k.Key)
		}
		t, a := d.order(k.Key, dir)
		terms = append(terms, t...)
		args = append(args, a...)
	}
	terms = append(terms, "created ASC", "id ASC")
	return strings.Join(terms, ", "), args, nil
}

// badListKey is the error for a key a list may not name.
func badListKey(key string) error {
	return fmt.Errorf("storage: list key %q: want 1 to 64 letters, digits or _", key)
}
