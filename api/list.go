package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// listQuery is the optional body of getAll and getCount (API.md "Lists").
type listQuery struct {
	limit, skip int
	sort        []sortKey
	filter      map[string]any
}

type sortKey struct {
	field string
	dir   int // 1 ascending, -1 descending
}

// maxListKeys bounds the keys a list query sorts or filters on (each): a record has about 30
// fields, and each key is a term of the store's query (SQLite refuses a query of too many).
const maxListKeys = 32

// readListQuery reads {limit, skip, sort, filter}; sort keys apply in the order given.
func (s *server) readListQuery(r *http.Request) (listQuery, error) {
	q := listQuery{limit: -1}
	raw, err := readRaw(r)
	if err != nil {
		return q, err
	}
	body, err := decodeObject(raw)
	if err != nil {
		return q, err
	}
	f := newFields(r.Context(), s.store, body)
	if n, ok := f.intIn("limit", false, 1, 1000); ok {
		q.limit = n
	}
	q.skip, _ = f.intIn("skip", false, 0, math.MaxInt32)
	if so := f.object("sort", false, false); so != nil {
		keys := objectKeys(raw, "sort")
		if len(keys) > maxListKeys {
			f.fail("sort", "must have at most %d keys", maxListKeys)
			keys = nil
		}
		for _, k := range keys {
			d, ok := so.integer(k, true, -1, 1)
			if ok && d == 0 {
				so.fail(k, "must be 1 or -1")
			}
			q.sort = append(q.sort, sortKey{field: k, dir: int(d)})
		}
	}
	if fo := f.object("filter", false, false); fo != nil {
		if len(fo.m) > maxListKeys {
			f.fail("filter", "must have at most %d keys", maxListKeys)
		} else {
			q.filter = fo.m
		}
	}
	f.done()
	if err := f.err(); err != nil {
		return q, err
	}
	s.logUnknown(r, f)
	return q, nil
}

// apply filters, sorts (stable, so ties stay oldest first), skips and limits docs.
func (q listQuery) apply(docs []map[string]any) []map[string]any {
	idx, _ := q.pick(docs)
	out := make([]map[string]any, len(idx))
	for i, j := range idx {
		out[i] = docs[j]
	}
	return out
}

// pick returns the indexes of the docs q keeps, in q's order after skip and limit, and how many
// matched the filter.
func (q listQuery) pick(docs []map[string]any) (idx []int, matched int) {
	for i, d := range docs {
		if q.matches(d) {
			idx = append(idx, i)
		}
	}
	matched = len(idx)
	if len(q.sort) > 0 {
		slices.SortStableFunc(idx, func(a, b int) int {
			for _, k := range q.sort {
				if c := compareValues(docs[a][k.field], docs[b][k.field]); c != 0 {
					return c * k.dir
				}
			}
			return 0
		})
	}
	idx = idx[min(q.skip, len(idx)):]
	if q.limit >= 0 && len(idx) > q.limit {
		idx = idx[:q.limit]
	}
	return idx, matched
}

func (q listQuery) matches(d map[string]any) bool {
	for k, want := range q.filter {
		if !equalValues(d[k], want) {
			return false
		}
	}
	return true
}

// keys are the document keys q filters or sorts on.
func (q listQuery) keys() []string {
	var ks []string
	for k := range q.filter {
		ks = append(ks, k)
	}
	for _, k := range q.sort {
		ks = append(ks, k.field)
	}
	return ks
}

// listHandler serves getAll (or getCount when count) over the docs load returns.
func (s *server) listHandler(load func(*http.Request) ([]map[string]any, error), count bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := s.readListQuery(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		docs, err := load(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		idx, matched := q.pick(docs)
		if count {
			writeJSON(w, http.StatusOK, map[string]any{"count": matched})
			return
		}
		out := make([]map[string]any, len(idx))
		for i, j := range idx {
			out[i] = docs[j]
		}
		w.Header().Set(totalHeader, strconv.Itoa(matched))
		writeJSON(w, http.StatusOK, out)
	}
}

// totalHeader tells a getAll client how many records match its filter, skip and limit aside.
const totalHeader = "X-Total-Count"

// objectKeys returns the keys of the object at top-level key of raw, in document order.
func objectKeys(raw []byte, key string) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top[key]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	// seen finds a repeated key at once: a 1 MiB body names some 100 000 keys, and a search of
	// the keys so far for each of them took a core for 17 s.
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// asNumber reads a JSON number or a numeric string.
func asNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	lit, ok := numberLiteral(v)
	if !ok || !jsonNumber.MatchString(lit) {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	return f, err == nil
}

func equalValues(a, b any) bool {
	_, aStr := a.(string)
	_, bStr := b.(string)
	if !(aStr && bStr) {
		if x, ok := asNumber(a); ok {
			if y, ok := asNumber(b); ok {
				return x == y
			}
		}
	}
	return reflect.DeepEqual(a, b)
}

// compareValues orders null < booleans < numbers < strings < anything else.
func compareValues(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 1:
		ab, bb := a.(bool), b.(bool)
		switch {
		case ab == bb:
			return 0
		case bb:
			return -1
		}
		return 1
	case 2:
		x, _ := asNumber(a)
		y, _ := asNumber(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case 3:
		return strings.Compare(a.(string), b.(string))
	}
	return 0
}

func rank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case json.Number, float64, int:
		return 2
	case string:
		return 3
	}
	return 4
}
