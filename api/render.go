package api

import (
	"net/http"

	"github.com/sluicemedia/sluice/storage"
)

// render turns a stored record into what clients read: the stored fields, _id, dates in
// TimeFormat, the process state (API.md "Records") and the module's computed fields.
func (s *server) render(r *http.Request, m *module, rec storage.Record) (map[string]any, error) {
	doc, err := s.renderBase(r, m, rec)
	if err != nil {
		return nil, err
	}
	if err := m.attach.run(s, r, rec, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// renderBase is render without the fields that cost a store query (m.attach).
func (s *server) renderBase(r *http.Request, m *module, rec storage.Record) (map[string]any, error) {
	doc, err := toDoc(rec)
	if err != nil {
		return nil, err
	}
	b := rec.Meta()
	doc["id"], doc["_id"] = b.ID, b.ID
	doc["created"], doc["modified"] = FormatTime(b.Created), FormatTime(b.Modified)
	if s.cfg.Cluster != nil {
		// The node running the record; empty when none does (or the module runs nothing).
		doc["node"] = ""
		if m.runs != runsNothing {
			doc["node"] = s.cfg.Cluster.Owner(r.Context(), m.kind, b.ID)
		}
	}
	if m.runs != runsNothing {
		s.addState(m, b, doc)
	}
	if err := m.decorate.run(s, r, rec, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// addState adds the state of the process that runs the record of m with base b.
func (s *server) addState(m *module, b *storage.Base, doc map[string]any) {
	st := s.procs.Status(m.kind, b.ID)
	doc["state"] = stateOf(st)
	since := st.Since
	if since.IsZero() {
		since = b.Modified // never ran: stopped since it was last changed
	}
	doc["state_since"] = FormatTime(since)
	doc["last_error"] = st.LastError
	doc["restarts"] = st.Restarts
	if st.State != "" && st.State != "stopped" {
		if links := s.procs.Stat(m.kind, b.ID).SRT; len(links) > 0 {
			doc["srt"] = srtDocs(links)
		}
	}
}

// stateOf is the state a client reads; an unknown process is stopped.
func stateOf(st Status) string {
	if st.State == "" {
		return "stopped"
	}
	return st.State
}
