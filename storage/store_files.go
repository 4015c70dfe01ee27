package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
func (s *Store) DeleteFile(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dbq) error {
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

// queryFiles runs a query that selects recorded file documents and their nodes.
func (s *Store) queryFiles(ctx context.Context, query string, args ...any) ([]RecordedFile, error) {
	rows, err := s.read().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: list recorded files: %w", err)
	}
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
