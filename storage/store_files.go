package storage

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AddFile stores a new recorded file of recording f.RecordID, held by the store's node (SetNode;
// f.Node is not read). f.ID must be set (use NewID); a zero Created becomes the current time. It
// wraps ErrNotFound when the recording does not exist.
func (s *Store) AddFile(ctx context.Context, f RecordedFile) error {
	if err := newRow("recorded file", f.ID, &f.Created); err != nil {
		return err
	}
	doc, err := encodeFile(&f)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx dbq) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO recorded_files (id, record_id, created, state, doc, node)
			VALUES (?, ?, ?, ?, ?, ?)`, f.ID, f.RecordID, formatTime(f.Created), f.State, doc, s.nodeID())
		return fileWriteErr(f, err)
	})
}

// UpdateFile replaces a stored recorded file (found by ID) with f; it wraps ErrNotFound.
func (s *Store) UpdateFile(ctx context.Context, f RecordedFile) error {
	doc, err := encodeFile(&f)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `UPDATE recorded_files SET record_id = ?, created = ?, state = ?, doc = ?
			WHERE id = ?`, f.RecordID, formatTime(f.Created), f.State, doc, f.ID)
		if err != nil {
			return fileWriteErr(f, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("storage: update recorded file %q: %w", f.ID, err)
		} else if n == 0 {
			return fmt.Errorf("recorded file %q: %w", f.ID, ErrNotFound)
		}
		return nil
	})
}

// Files returns the recorded files of a recording, oldest first.
func (s *Store) Files(ctx context.Context, recordID string) ([]RecordedFile, error) {
	return s.queryFiles(ctx, `SELECT doc, node FROM recorded_files WHERE record_id = ? ORDER BY created, id`, recordID)
}

// FilesInState returns the recorded files of every recording in a state (e.g. FileRecording, to
// repair after a crash) that the store's node holds (SetNode), oldest first.
func (s *Store) FilesInState(ctx context.Context, state string) ([]RecordedFile, error) {
	return s.queryFiles(ctx, `SELECT doc, node FROM recorded_files WHERE state = ? AND node = ? ORDER BY created, id`, state, s.nodeID())
}

// File returns one recorded file; it wraps ErrNotFound.
func (s *Store) File(ctx context.Context, id string) (RecordedFile, error) {
	var doc []byte
	var node string
	err := s.read().QueryRowContext(ctx, `SELECT doc, node FROM recorded_files WHERE id = ?`, id).Scan(&doc, &node)
	if errors.Is(err, sql.ErrNoRows) {
		return RecordedFile{}, fmt.Errorf("recorded file %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return RecordedFile{}, fmt.Errorf("storage: read recorded file %q: %w", id, err)
	}
	var f RecordedFile
	if err := json.Unmarshal(doc, &f); err != nil {
		return RecordedFile{}, fmt.Errorf("storage: decode recorded file %q: %w", id, err)
	}
	f.Node = node
	return f, nil
}

// DeleteFile removes the entry of a recorded file (not the file on disk); it wraps ErrNotFound.
// When another node holds the file (its node is neither "" nor the store's, SetNode), the
// removal of its bytes is queued for that node in the same transaction: the holder reads it
// with FileRemovals, now or whenever it runs again.
func (s *Store) DeleteFile(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dbq) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO file_removals (file_id, node, record_id, queued, doc)
			SELECT id, node, record_id, ?, doc FROM recorded_files WHERE id = ? AND node <> '' AND node <> ?`,
			formatTime(now()), id, s.nodeID()); err != nil {
			return fmt.Errorf("storage: queue the removal of recorded file %q: %w", id, err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM recorded_files WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("storage: delete recorded file %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("storage: delete recorded file %q: %w", id, err)
		} else if n == 0 {
			return fmt.Errorf("recorded file %q: %w", id, ErrNotFound)
		}
		return nil
	})
}

// MaxFileRemovals is how many queued removals FileRemovals returns at once.
const MaxFileRemovals = 500

// FileRemovals lists the recorded files whose entries were deleted through another node while
// the store's node (SetNode) holds their bytes, oldest first, at most MaxFileRemovals: the
// files this node should delete from its disk, then mark done (FileRemovalDone).
func (s *Store) FileRemovals(ctx context.Context) ([]RecordedFile, error) {
	node := s.nodeID()
	if node == "" {
		return nil, nil
	}
	return s.queryFiles(ctx, `SELECT doc, node FROM file_removals WHERE node = ? ORDER BY queued, file_id LIMIT ?`,
		node, MaxFileRemovals)
}

// FileRemovalDone drops the queued removal of a recorded file (its bytes are gone); one not
// queued is not an error.
func (s *Store) FileRemovalDone(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dbq) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM file_removals WHERE file_id = ?`, id); err != nil {
			return fmt.Errorf("storage: drop the queued removal of recorded file %q: %w", id, err)
		}
		return nil
	})
}

// RetireNode removes node id from the cluster for good, in one transaction: its row in nodes
// (its leases' node becomes none), the entries of the recorded files it holds, and the
// removals queued for it. It returns the entries removed, oldest first, and how many queued
// removals it dropped. It is for a node that will not run again with what its data folder
// held (the machine or its disk is gone): the bytes of those files are out of reach, and their
// entries and queued removals would wait for it forever. A node whose heartbeat is within ttl
// wraps ErrNodeRunning and nothing changes; an unknown id wraps ErrNotFound. Only a
// PostgreSQL store has nodes.
func (s *Store) RetireNode(ctx context.Context, id string, ttl time.Duration) (files []RecordedFile, queued int, err error) {
	if s.d != postgresDialect {
		return nil, 0, fmt.Errorf("storage: retire node %q: a SQLite store has no nodes", id)
	}
	err = s.write(ctx, func(tx dbq) error {
		var live bool
		// FOR UPDATE: a heartbeat that comes meanwhile waits for the end of the transaction,
		// then registers the node anew.
		err := tx.QueryRowContext(ctx, `SELECT heartbeat > now() - ?::float8 * interval '1 millisecond'
			FROM nodes WHERE id = ? FOR UPDATE`, float64(ttl)/float64(time.Millisecond), id).Scan(&live)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("node %q: %w", id, ErrNotFound)
		case err != nil:
			return fmt.Errorf("storage: retire node %q: %w", id, err)
		case live:
			return fmt.Errorf("node %q heartbeat within the last %v: %w", id, ttl, ErrNodeRunning)
		}
		rows, err := tx.QueryContext(ctx, `DELETE FROM recorded_files WHERE node = ? RETURNING doc, node`, id)
		if err != nil {
			return fmt.Errorf("storage: retire node %q: %w", id, err)
		}
		if files, err = scanFiles(rows); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM file_removals WHERE node = ?`, id)
		if err != nil {
			return fmt.Errorf("storage: retire node %q: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("storage: retire node %q: %w", id, err)
		}
		queued = int(n)
		if _, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("storage: retire node %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(files, func(a, b RecordedFile) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return files, queued, nil
}

// queryFiles runs a query that selects recorded file documents and their nodes.
func (s *Store) queryFiles(ctx context.Context, query string, args ...any) ([]RecordedFile, error) {
	rows, err := s.read().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: list recorded files: %w", err)
	}
	return scanFiles(rows)
}

// scanFiles reads rows of recorded file documents and their nodes, and closes rows.
func scanFiles(rows *sql.Rows) ([]RecordedFile, error) {
	defer rows.Close()
	var files []RecordedFile
	for rows.Next() {
		var doc []byte
		var node string
		if err := rows.Scan(&doc, &node); err != nil {
			return nil, fmt.Errorf("storage: list recorded files: %w", err)
		}
		var f RecordedFile
		if err := json.Unmarshal(doc, &f); err != nil {
			return nil, fmt.Errorf("storage: decode recorded file: %w", err)
		}
		f.Node = node
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: list recorded files: %w", err)
	}
	return files, nil
}

// encodeFile puts f's times in UTC and returns its JSON document.
func encodeFile(f *RecordedFile) (string, error) {
	f.Created = f.Created.UTC()
	if f.Ended != nil {
		ended := f.Ended.UTC()
		f.Ended = &ended
	}
	doc, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("storage: encode recorded file %q: %w", f.ID, err)
	}
	return string(doc), nil
}

// fileWriteErr maps a failed insert or update of a recorded_files row to the typed errors.
func fileWriteErr(f RecordedFile, err error) error {
	switch {
	case err == nil:
		return nil
	case isForeignKeyViolation(err):
		return fmt.Errorf("recording %q of recorded file %q: %w", f.RecordID, f.ID, ErrNotFound)
	case isPrimaryKeyViolation(err):
		return fmt.Errorf("storage: recorded file id %q is already used", f.ID)
	default:
		return fmt.Errorf("storage: write recorded file %q: %w", f.ID, err)
	}
}
