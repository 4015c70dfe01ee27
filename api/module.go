package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// module describes one managed kind of record; the generic handlers of this file serve it.
type module struct {
	kind storage.Module
	path string // URL segment under /api/
	noun string // for messages: "player"
	// newRecord returns an empty record of the module, for Store.Get and ListDocs.
	newRecord func() storage.Record
	// validate reads a whole record from a request body (or a merged update).
	validate func(f *fields) storage.Record
	// decorate adds the module's computed read fields to a rendered record, from the record alone.
	decorate readHook
	// attach adds the read fields that cost a store query per record (a recording's files); a
	// list runs it for its page only.
	attach readHook
	// schema is the JSON schema of the create body (OpenAPI).
	schema map[string]any
	// runs is what the module's records run: it decides their routes and processes.
	runs runKind
}

// runKind is what a module's records run.
type runKind int

const (
	runsProcess runKind = iota // a media process; the module has getStat
	runsServer                 // a protocol server; the module has getActiveStreams
	runsNothing                // nothing (webhooks): no start, stop, state or statistics
)

// newModule describes the module of records of type R, which validate reads from a body; the
// record type names the module's kind. The caller adds what else the module has.
func newModule[R any, P interface {
	*R
	storage.Record
}](runs runKind, path, noun string, validate func(f *fields) P, schema map[string]any) *module {
	return &module{
		runs:      runs,
		kind:      P(new(R)).Module(),
		path:      path,
		noun:      noun,
		newRecord: func() storage.Record { return P(new(R)) },
		validate:  func(f *fields) storage.Record { return validate(f) },
		schema:    schema,
	}
}

// readHook adds read fields to a rendered record. Its keys are the read keys it adds, changes
// or hides: a list that filters or sorts on one of them is served in memory, not in the store.
type readHook struct {
	add  func(s *server, r *http.Request, rec storage.Record, doc map[string]any) error
	keys []string
}

// run adds h's fields to doc; a module without the hook adds none.
func (h readHook) run(s *server, r *http.Request, rec storage.Record, doc map[string]any) error {
	if h.add == nil {
		return nil
	}
	return h.add(s, r, rec, doc)
}

// generatedKeys are read-only fields a client may echo back from a read; they are not unknown.
var generatedKeys = []string{"id", "_id", "created", "modified", "user_id", "state", "state_since",
	"last_error", "restarts", "hls_url", "dash_url", "srt"}

// clusterKey is the read-only field a cluster adds to every record: the node running it.
const clusterKey = "node"

// generated are the generatedKeys of this server: with a cluster, node too.
func (s *server) generated() []string {
	if s.cfg.Cluster != nil {
		return append(slices.Clone(generatedKeys), clusterKey)
	}
	return generatedKeys
}

// recordFields reads a record's body under the server's policies.
func (s *server) recordFields(ctx context.Context, body map[string]any) *fields {
	f := newFields(ctx, s.store, body)
	f.vc.inputs = &s.inputs
	f.vc.urlChecks = s.urlChecks
	return f
}

func (f *fields) skip(keys ...string) {
	for _, k := range keys {
		f.used[k] = true
	}
}

func (s *server) logUnknown(r *http.Request, f *fields) {
	if len(f.vc.unknown) > 0 {
		s.log.Debug("ignoring unknown fields", "path", r.URL.Path, "fields", f.vc.unknown)
	}
}

// notFound answers a missing record of m by id.
func (m *module) notFound(id string, err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound("no %s has id %s", m.noun, id)
	}
	return err
}

// load reads the record of m with id.
func (s *server) load(r *http.Request, m *module, id string) (storage.Record, error) {
	rec := m.newRecord()
	if err := s.store.Get(r.Context(), m.kind, id, rec); err != nil {
		return nil, m.notFound(id, err)
	}
	return rec, nil
}

// readRecord reads a body that addresses one record of m by id, and loads that record.
func (s *server) readRecord(r *http.Request, m *module) (string, storage.Record, error) {
	id, err := s.readID(r)
	if err != nil {
		return "", nil, err
	}
	rec, err := s.load(r, m, id)
	return id, rec, err
}

// readID reads a body that addresses one record by id (or _id).
func (s *server) readID(r *http.Request) (string, error) {
	var id string
	err := s.readFields(r, func(f *fields) { id = f.requireID() })
	return id, err
}

// readFields reads a body's fields with read, fails for a field it did not read or read wrong,
// and logs the unknown ones it let pass.
func (s *server) readFields(r *http.Request, read func(f *fields)) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	f := newFields(r.Context(), s.store, body)
	read(f)
	f.done()
	if err := f.err(); err != nil {
		return err
	}
	s.logUnknown(r, f)
	return nil
}

// answerBody answers a request with act's result on its body.
func (s *server) answerBody(act func(r *http.Request, body map[string]any) (status int, resp any, err error)) http.HandlerFunc {
	return s.answer(func(r *http.Request) (int, any, error) {
		body, err := readBody(r)
		if err != nil {
			return 0, nil, err
		}
		return act(r, body)
	})
}

// answerRecord answers a request that addresses one record of m by id with act's result on
// that record.
func (s *server) answerRecord(m *module, act func(r *http.Request, id string, rec storage.Record) (any, error)) http.HandlerFunc {
	return s.answer(func(r *http.Request) (int, any, error) {
		id, rec, err := s.readRecord(r, m)
		if err != nil {
			return 0, nil, err
		}
		resp, err := act(r, id, rec)
		return http.StatusOK, resp, err
	})
}

func (s *server) create(m *module) http.HandlerFunc {
	return s.answerBody(func(r *http.Request, body map[string]any) (int, any, error) {
		ctx := r.Context()
		f := s.recordFields(ctx, body)
		rec, err := s.validated(m, f)
		if err != nil {
			return 0, nil, err
		}
		s.logUnknown(r, f)
		now := s.now().UTC().Truncate(time.Millisecond)
		b := rec.Meta()
		b.ID, b.Created, b.Modified, b.UserID = storage.NewID(), now, now, userID(r)
		if err := s.admit(r, m, rec); err != nil {
			return 0, nil, err
		}
		unlock, err := s.procs.Lock(ctx, m.kind, b.ID)
		if err != nil {
			return 0, nil, err
		}
		defer unlock()
		if err := s.store.Create(ctx, rec); err != nil {
			return 0, nil, storeConflict(m, rec, err)
		}
		s.changed(m, b.ID, rec.UniqueName(), "created")
		if b.Active && m.runs != runsNothing {
			// active is the wish and state the fact: a start that fails shows in state/last_error.
			if err := s.procs.Start(ctx, m.kind, b.ID); err != nil {
				s.log.Warn("start after create failed", "module", string(m.kind), "id", b.ID, "name", rec.UniqueName(), "err", err)
			}
		}
		return http.StatusCreated, map[string]any{"success": true, "id": b.ID, "created": FormatTime(now)}, nil
	})
}

func (s *server) update(m *module) http.HandlerFunc {
	return s.answerBody(func(r *http.Request, body map[string]any) (int, any, error) {
		ctx := r.Context()
		// The given fields are checked on their own first, so that a bad value is answered 400
		// before an unknown id is answered 404.
		pf := s.recordFields(ctx, cloneDoc(body))
		id := pf.requireID()
		pf.partial = true
		if _, err := s.validated(m, pf); err != nil {
			return 0, nil, err
		}
		s.logUnknown(r, pf)
		unlock, err := s.procs.Lock(ctx, m.kind, id)
		if err != nil {
			return 0, nil, err
		}
		defer unlock()
		old, err := s.load(r, m, id)
		if err != nil {
			return 0, nil, err
		}
		doc, err := toDoc(old)
		if err != nil {
			return 0, nil, err
		}
		// null is the same as absent, here too: the field keeps its value. A client that sends
		// every field of its model, the unset ones as null, must not reset them to their
		// defaults (a stopped process started, a transcoding dropped).
		for k, v := range body {
			if k != "id" && k != "_id" && v != nil {
				doc[k] = v
			}
		}
		rec, err := s.validated(m, s.recordFields(ctx, doc))
		if err != nil {
			return 0, nil, err
		}
		ob, b := old.Meta(), rec.Meta()
		now := s.now().UTC().Truncate(time.Millisecond)
		b.ID, b.Created, b.UserID, b.Modified = ob.ID, ob.Created, ob.UserID, now
		if err := s.admit(r, m, rec); err != nil {
			return 0, nil, err
		}
		if err := s.store.Update(ctx, rec); err != nil {
			return 0, nil, m.notFound(id, storeConflict(m, rec, err))
		}
		s.changed(m, id, rec.UniqueName(), "updated")
		if err := s.applyActive(r, m, id, ob.Active, b.Active); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"success": true, "id": id, "updated": FormatTime(now)}, nil
	})
}

// validated checks f as a record of m (the fields the server generates are not the client's)
// and returns the record.
func (s *server) validated(m *module, f *fields) (storage.Record, error) {
	f.skip(s.generated()...)
	rec := m.validate(f)
	return rec, f.err()
}

// admit refuses a record whose names or ports another holds, or that this server cannot run.
func (s *server) admit(r *http.Request, m *module, rec storage.Record) error {
	if err := s.checkConflicts(r, m, rec); err != nil {
		return err
	}
	return s.check(r.Context(), m, rec)
}

// applyActive brings a process in line with an update: a running one restarts with the new
// settings, a stopped one stays stopped, and a changed active flag starts or stops it.
func (s *server) applyActive(r *http.Request, m *module, id string, was, is bool) error {
	ctx := r.Context()
	switch {
	case m.runs == runsNothing:
		return nil
	case was && is:
		return s.procs.Restart(ctx, m.kind, id)
	case is:
		return s.procs.Start(ctx, m.kind, id)
	case was:
		return s.procs.Stop(ctx, m.kind, id)
	}
	return nil
}

func (s *server) setActive(m *module, active bool) http.HandlerFunc {
	return s.byID(m, func(r *http.Request, id string) error {
		if err := s.store.SetActive(r.Context(), m.kind, id, active, s.now()); err != nil {
			return m.notFound(id, err)
		}
		change := "stopped"
		if active {
			change = "started"
		}
		s.changed(m, id, s.recordName(r, m, id), change)
		if active {
			return s.procs.Start(r.Context(), m.kind, id)
		}
		return s.procs.Stop(r.Context(), m.kind, id)
	})
}

// remove stops and deletes a record; it answers once the process's children and sockets are
// released, so the record's ports may be taken again at once. A recording's files stay on disk and are no longer
// listed; removeFile deletes a file before its recording is removed.
func (s *server) remove(m *module) http.HandlerFunc {
	return s.byID(m, func(r *http.Request, id string) error {
		rec, err := s.load(r, m, id)
		if err != nil {
			return err
		}
		if m.runs != runsNothing {
			if err := s.procs.Remove(r.Context(), m.kind, id); err != nil {
				return err
			}
		}
		if err := s.store.Delete(r.Context(), m.kind, id); err != nil {
			return m.notFound(id, err)
		}
		s.changed(m, id, rec.UniqueName(), "removed")
		return nil
	})
}

// byID answers a request that addresses one record of m by id: it reads the id, runs act
// under the record's lock, and answers act's error or success.
func (s *server) byID(m *module, act func(r *http.Request, id string) error) http.HandlerFunc {
	return s.answer(func(r *http.Request) (int, any, error) {
		id, err := s.readID(r)
		if err != nil {
			return 0, nil, err
		}
		unlock, err := s.procs.Lock(r.Context(), m.kind, id)
		if err != nil {
			return 0, nil, err
		}
		defer unlock()
		if err := act(r, id); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"success": true}, nil
	})
}

func (s *server) getByID(m *module) http.HandlerFunc {
	return s.answerRecord(m, func(r *http.Request, _ string, rec storage.Record) (any, error) {
		return s.render(r, m, rec)
	})
}

func (s *server) getAll(m *module) http.HandlerFunc { return s.listing(m, false) }

func (s *server) getCount(m *module) http.HandlerFunc { return s.listing(m, true) }

// listing answers a list query: the documents with their total in a header, or (countOnly)
// the total alone.
func (s *server) listing(m *module, countOnly bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := s.readListQuery(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		docs, total, err := s.list(r, m, q, countOnly)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if countOnly {
			writeJSON(w, http.StatusOK, map[string]any{"count": total})
			return
		}
		w.Header().Set(totalHeader, strconv.Itoa(total))
		writeJSON(w, http.StatusOK, docs)
	}
}

func (s *server) getStat(m *module) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := readBody(r); err != nil {
			s.fail(w, r, err)
			return
		}
		recs, err := s.records(r, m)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out := make([]map[string]any, 0, len(recs))
		for _, rec := range recs {
			id := rec.Meta().ID
			st, state := s.procs.Stat(m.kind, id), stateOf(s.procs.Status(m.kind, id))
			if state == "stopped" {
				st = Stat{}
			}
			e := map[string]any{"id": id, "bitrate": st.Bitrate, "fps": st.FPS,
				"bytes_in": st.BytesIn, "uptime_sec": st.UptimeSec, "state": state,
				"discontinuities": st.Discontinuities}
			if len(st.SRT) > 0 {
				e["srt"] = srtDocs(st.SRT)
			}
			out = append(out, e)
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// check asks Processes whether it can run rec; a module that runs nothing needs nothing.
func (s *server) check(ctx context.Context, m *module, rec storage.Record) error {
	if m.runs == runsNothing {
		return nil
	}
	return s.procs.Check(ctx, rec)
}

// changed tells Config.Changes of a change the API made.
func (s *server) changed(m *module, id, name, change string) {
	if s.cfg.Changes != nil {
		s.cfg.Changes.Changed(m.kind, id, name, change)
	}
}

// recordName is the unique name of a record, for an event; empty when it cannot be read.
func (s *server) recordName(r *http.Request, m *module, id string) string {
	rec, err := s.load(r, m, id)
	if err != nil {
		return ""
	}
	return rec.UniqueName()
}

func cloneDoc(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
