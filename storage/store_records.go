package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RecordRef names a stored record: its module and id.
type RecordRef struct {
	Module Module
	ID     string
}

// Create stores a new record and claims its PortKeys, in one transaction. An empty ID is filled with
// NewID, a zero Created with the current time and a zero Modified with Created; both times are
// stored in UTC (r is updated in place). It fails wrapping ErrNameTaken when the module already has
// a record of that name, and with a *PortTakenError when a port is held by another entity or named
// twice by r.
func (s *Store) Create(ctx context.Context, r Record) error {
	b := r.Meta()
	if b.ID == "" {
		b.ID = NewID()
	}
	if b.Created.IsZero() {
		b.Created = now()
	}
	if b.Modified.IsZero() {
		b.Modified = b.Created
	}
	b.Created, b.Modified = b.Created.UTC(), b.Modified.UTC()
	doc, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("storage: encode %s %q: %w", r.Module(), b.ID, err)
	}
	m, name := r.Module(), r.UniqueName()
	return s.write(ctx, func(tx dbq) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO records (id, module, name, active, created, modified, doc)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			b.ID, string(m), name, boolInt(b.Active), formatTime(b.Created), formatTime(b.Modified), string(doc))
		if err != nil {
			return recordWriteErr(m, b.ID, name, err)
		}
		return replaceClaims(ctx, tx, m, b.ID, name, r.PortKeys())
	})
}

// Update replaces a stored record (found by module and ID) with r: its document, name, active flag
// and modified time, and its port claims (keys it keeps stay with their created date). Created is
// immutable: r's Created is set to the stored one. A zero Modified becomes the current time. It
// fails wrapping ErrNotFound, ErrNameTaken, or with a *PortTakenError, like Create.
func (s *Store) Update(ctx context.Context, r Record) error {
	b := r.Meta()
	m, name := r.Module(), r.UniqueName()
	return s.write(ctx, func(tx dbq) error {
		var created string
		err := tx.QueryRowContext(ctx, `SELECT created FROM records WHERE module = ? AND id = ?`,
			string(m), b.ID).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(m, b.ID)
		}
		if err != nil {
			return fmt.Errorf("storage: read %s %q: %w", m, b.ID, err)
		}
		if b.Created, err = parseTime(created); err != nil {
			return err
		}
		if b.Modified.IsZero() {
			b.Modified = now()
		}
		b.Modified = b.Modified.UTC()
		doc, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("storage: encode %s %q: %w", m, b.ID, err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE records SET name = ?, active = ?, modified = ?, doc = ?
			WHERE module = ? AND id = ?`,
			name, boolInt(b.Active), formatTime(b.Modified), string(doc), string(m), b.ID)
		if err != nil {
			return recordWriteErr(m, b.ID, name, err)
		}
		return replaceClaims(ctx, tx, m, b.ID, name, r.PortKeys())
	})
}

// Get decodes the stored document of record id of module m into into; it wraps ErrNotFound.
func (s *Store) Get(ctx context.Context, m Module, id string, into Record) error {
	var doc []byte
	err := s.read().QueryRowContext(ctx, `SELECT doc FROM records WHERE module = ? AND id = ?`,
		string(m), id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(m, id)
	}
	if err != nil {
		return fmt.Errorf("storage: read %s %q: %w", m, id, err)
	}
	if err := json.Unmarshal(doc, into); err != nil {
		return fmt.Errorf("storage: decode %s %q: %w", m, id, err)
	}
	return nil
}

// Delete removes a record with its port claims and recorded files; it wraps ErrNotFound.
func (s *Store) Delete(ctx context.Context, m Module, id string) error {
	return s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM records WHERE module = ? AND id = ?`, string(m), id)
		if err != nil {
			return fmt.Errorf("storage: delete %s %q: %w", m, id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("storage: delete %s %q: %w", m, id, err)
		} else if n == 0 {
			return notFound(m, id)
		}
		// recorded_files rows go by ON DELETE CASCADE.
		if _, err := tx.ExecContext(ctx, `DELETE FROM port_claims WHERE module = ? AND entity_id = ?`,
			string(m), id); err != nil {
			return fmt.Errorf("storage: free ports of %s %q: %w", m, id, err)
		}
		return nil
	})
}

// SetActive sets a record's active flag and modified time, in its column and in its document; it
// wraps ErrNotFound.
func (s *Store) SetActive(ctx context.Context, m Module, id string, active bool, at time.Time) error {
	at = at.UTC()
	atJSON, err := json.Marshal(at)
	if err != nil {
		return fmt.Errorf("storage: encode time %v: %w", at, err)
	}
	activeJSON := "false"
	if active {
		activeJSON = "true"
	}
	return s.write(ctx, func(tx dbq) error {
		var doc []byte
		err := tx.QueryRowContext(ctx, `SELECT doc FROM records WHERE module = ? AND id = ?`,
			string(m), id).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(m, id)
		}
		if err != nil {
			return fmt.Errorf("storage: read %s %q: %w", m, id, err)
		}
		// setMembers keeps the document's key order and every other byte of it.
		doc, err = setMembers(doc, []member{{"active", []byte(activeJSON)}, {"modified", atJSON}})
		if err != nil {
			return fmt.Errorf("storage: stored %s %q: %w", m, id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE records SET active = ?, modified = ?, doc = ?
			WHERE module = ? AND id = ?`,
			boolInt(active), formatTime(at), string(doc), string(m), id); err != nil {
			return fmt.Errorf("storage: set active of %s %q: %w", m, id, err)
		}
		return nil
	})
}

// ListDocs returns the stored JSON documents of module m, oldest first (created, then id).
func (s *Store) ListDocs(ctx context.Context, m Module) ([][]byte, error) {
	return s.queryDocs(ctx, m, `SELECT doc FROM records WHERE module = ? ORDER BY created, id`, string(m))
}

// ListActive returns every record whose active flag is set, of every module, oldest first; the
// server starts them at boot.
func (s *Store) ListActive(ctx context.Context) ([]RecordRef, error) {
	rows, err := s.read().QueryContext(ctx,
		`SELECT module, id FROM records WHERE active = 1 ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("storage: list active: %w", err)
	}
	defer rows.Close()
	var refs []RecordRef
	for rows.Next() {
		var ref RecordRef
		if err := rows.Scan(&ref.Module, &ref.ID); err != nil {
			return nil, fmt.Errorf("storage: list active: %w", err)
		}
		refs = append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: list active: %w", err)
	}
	return refs, nil
}

// List decodes every record of module m into a new *T, oldest first.
func List[T any, P interface {
	*T
	Record
}](ctx context.Context, s *Store, m Module) ([]P, error) {
	docs, err := s.ListDocs(ctx, m)
	if err != nil {
		return nil, err
	}
	out := make([]P, 0, len(docs))
	for _, doc := range docs {
		p := P(new(T))
		if err := json.Unmarshal(doc, p); err != nil {
			return nil, fmt.Errorf("storage: decode %s: %w", m, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Load decodes record id of module m into a new *T; it wraps ErrNotFound.
func Load[T any, P interface {
	*T
	Record
}](ctx context.Context, s *Store, m Module, id string) (P, error) {
	p := P(new(T))
	if err := s.Get(ctx, m, id, p); err != nil {
		return nil, err
	}
	return p, nil
}

// notFound is the error for an unknown record.
func notFound(m Module, id string) error { return fmt.Errorf("%s %q: %w", m, id, ErrNotFound) }

// recordWriteErr maps a failed insert or update of a records row to the typed errors.
func recordWriteErr(m Module, id, name string, err error) error {
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("%s %q: %w", m, name, ErrNameTaken)
	case isPrimaryKeyViolation(err):
		return fmt.Errorf("storage: %s id %q is already used", m, id)
	default:
		return fmt.Errorf("storage: write %s %q: %w", m, id, err)
	}
}
