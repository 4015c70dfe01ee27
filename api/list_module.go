package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/sluicemedia/sluice/storage"
)

// renderedKeys are the read keys every record gets at render time, or in another form than
// stored: _id, the process state, and created and modified, which are stored with nanoseconds
// and read in TimeFormat (a filter compares that text; a sort may use the stored times).
var renderedKeys = []string{"_id", "state", "state_since", "last_error", "restarts", "created", "modified", "srt"}

// storeQuery returns q as a query the store runs, or false when the store cannot answer it as
// clients read the records: a filter or sort on a key that render adds, changes or hides, or a
// filter value the store does not compare (an object, an array, a number out of range).
func (q listQuery) storeQuery(m *module) (storage.ListQuery, bool) {
	sq := storage.ListQuery{Skip: q.skip, Limit: q.limit}
	computed := func(k string) bool {
		return slices.Contains(renderedKeys, k) || slices.Contains(m.decorate.keys, k) || slices.Contains(m.attach.keys, k)
	}
	for k, v := range q.filter {
		if k == "_id" {
			k = "id"
		}
		if computed(k) || !storage.ValidListKey(k) {
			return sq, false
		}
		switch x := v.(type) {
		case nil, bool, string:
		case json.Number:
			if _, ok := storage.NumberText(x.String()); !ok {
				return sq, false
			}
		default:
			return sq, false
		}
		sq.Filter = append(sq.Filter, storage.Match{Key: k, Value: v})
	}
	for _, k := range q.sort {
		key := k.field
		switch {
		case key == "_id":
			key = "id"
		case key == "created" || key == "modified":
			// Their TimeFormat text sorts as the stored times do.
		case computed(key) || !storage.ValidListKey(key):
			return sq, false
		}
		sq.Sort = append(sq.Sort, storage.SortKey{Key: key, Desc: k.dir < 0})
	}
	return sq, true
}

// list serves getAll and getCount of m: the page of records q selects, rendered, and how many
// match q's filter. Filter, sort, skip and limit run in the store when it can answer q, and only
// the page is read and rendered; otherwise every record is rendered (without the fields that cost
// a store query, unless q names them) and q applied in memory. With countOnly no page is made.
func (s *server) list(r *http.Request, m *module, q listQuery, countOnly bool) ([]map[string]any, int, error) {
	ctx := r.Context()
	// In a cluster node is rendered too (the record's owner): a query naming it runs in memory.
	if sq, ok := q.storeQuery(m); ok && (s.cfg.Cluster == nil || !slices.Contains(q.keys(), clusterKey)) {
		if countOnly {
			n, err := s.store.Count(ctx, m.kind, sq.Filter)
			return nil, n, err
		}
		raw, err := s.store.ListPage(ctx, m.kind, sq)
		if err != nil {
			return nil, 0, err
		}
		docs := make([]map[string]any, 0, len(raw))
		for _, d := range raw {
			rec, err := decodeRecord(m, d)
			if err != nil {
				return nil, 0, err
			}
			doc, err := s.render(r, m, rec)
			if err != nil {
				return nil, 0, err
			}
			docs = append(docs, doc)
		}
		// The page tells the total when it is the last one; otherwise count.
		total := q.skip + len(raw)
		if (q.limit >= 0 && len(raw) >= q.limit) || (len(raw) == 0 && q.skip > 0) {
			if total, err = s.store.Count(ctx, m.kind, sq.Filter); err != nil {
				return nil, 0, err
			}
		}
		return docs, total, nil
	}

	recs, err := s.records(r, m)
	if err != nil {
		return nil, 0, err
	}
	attachAll := slices.ContainsFunc(q.keys(), func(k string) bool { return slices.Contains(m.attach.keys, k) })
	docs := make([]map[string]any, len(recs))
	for i, rec := range recs {
		if attachAll {
			docs[i], err = s.render(r, m, rec)
		} else {
			docs[i], err = s.renderBase(r, m, rec)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	idx, matched := q.pick(docs)
	if countOnly {
		return nil, matched, nil
	}
	page := make([]map[string]any, len(idx))
	for i, j := range idx {
		page[i] = docs[j]
		if !attachAll {
			if err := m.attach.run(s, r, recs[j], docs[j]); err != nil {
				return nil, 0, err
			}
		}
	}
	return page, matched, nil
}

// decodeRecord decodes a stored document of m.
func decodeRecord(m *module, doc []byte) (storage.Record, error) {
	rec := m.newRecord()
	if err := json.Unmarshal(doc, rec); err != nil {
		return nil, fmt.Errorf("decode stored %s: %w", m.noun, err)
	}
	return rec, nil
}

// records returns every record of m, oldest first.
func (s *server) records(r *http.Request, m *module) ([]storage.Record, error) {
	docs, err := s.store.ListDocs(r.Context(), m.kind)
	if err != nil {
		return nil, err
	}
	out := make([]storage.Record, 0, len(docs))
	for _, d := range docs {
		rec, err := decodeRecord(m, d)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}
