package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/recorder"
	"github.com/sluicemedia/sluice/storage"
)

// RemoveFile implements api.Processes. A file already gone is not an error.
func (m *Manager) RemoveFile(_ context.Context, f storage.RecordedFile) error {
	if err := recorder.RemoveFile(m.recDir, f.Path); err != nil {
		return fileErr(err)
	}
	if m.emit != nil {
		name := recordName(context.Background(), m.store, storage.RecordRef{Module: storage.ModuleRecording, ID: f.RecordID})
		m.emit.emit(fileEvent(events.FileRemoved, f.RecordID, name, f))
	}
	return nil
}

// OpenFile implements api.Processes.
func (m *Manager) OpenFile(_ context.Context, f storage.RecordedFile) (io.ReadSeekCloser, time.Time, error) {
	fh, mod, err := recorder.OpenFile(m.recDir, f.Path)
	if err != nil {
		return nil, time.Time{}, fileErr(err)
	}
	return fh, mod, nil
}

// fileErr makes a recorded file outside the folder, or gone, a storage.ErrNotFound.
func fileErr(err error) error {
	if errors.Is(err, recorder.ErrOutside) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", err, storage.ErrNotFound)
	}
	return err
}

// MemoryMP4 implements api.Processes.
func (m *Manager) MemoryMP4(_ context.Context, id string) (io.ReadSeeker, error) {
	if r := m.get(storage.ModuleRecording, id); r != nil && r.p.Memory != nil {
		if b := r.p.Memory(); len(b) > 0 {
			return bytes.NewReader(b), nil
		}
	}
	return nil, fmt.Errorf("memory recording %s holds nothing yet (it is stopped, or no key frame has arrived): %w", id, storage.ErrNotFound)
}

// recordName is the unique name of a stored record, for logs; empty when it cannot be read.
func recordName(ctx context.Context, st *storage.Store, ref storage.RecordRef) string {
	rec, err := newRecord(ref.Module)
	if err != nil || st.Get(ctx, ref.Module, ref.ID, rec) != nil {
		return ""
	}
	return rec.UniqueName()
}
