package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/recorder"
	"github.com/sluicemedia/sluice/storage"
)

// RemoveFile implements api.Processes. A file already gone is not an error. In a cluster, a
// file another node holds is not on this disk: its entry goes with the removal of its bytes
// queued for the holder (storage.Store.DeleteFile), and the holder is told, so that it deletes
// them at once, or when it runs again (removeQueuedFiles), and reports the removal.
func (m *Manager) RemoveFile(ctx context.Context, f storage.RecordedFile) error {
	if m.cl != nil && f.Node != "" && f.Node != m.cl.Node().ID() {
		// An entry already gone was removed by another request, which queued the bytes.
		if err := m.store.DeleteFile(ctx, f.ID); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		m.cl.Tell(ctx, cluster.OpFiles, clusterRef(storage.ModuleRecording, f.RecordID), f.Node)
		return nil
	}
	if err := recorder.RemoveFile(m.recDir, f.Path); err != nil {
		return fileErr(err)
	}
	m.fileRemoved(f)
	return nil
}

// fileRemoved reports that the bytes of f are gone from this node's disk.
func (m *Manager) fileRemoved(f storage.RecordedFile) {
	if m.emit != nil {
		name := recordName(context.Background(), m.store, storage.RecordRef{Module: storage.ModuleRecording, ID: f.RecordID})
		m.emit.emit(fileEvent(events.FileRemoved, f.RecordID, name, f))
	}
}

// removeQueuedFiles deletes from this node's disk the recorded files whose entries were
// removed through other nodes (cluster.CoordinatorOptions.Files). A file that cannot be
// deleted stays queued, to be tried again at the next round; one outside the recordings
// folder (a path no recorder writes) is dropped from the queue with a warning.
func (m *Manager) removeQueuedFiles(ctx context.Context) {
	files, err := m.store.FileRemovals(ctx)
	if err != nil {
		m.log.Warn("cluster: list the files removed through other nodes", "error", err)
		return
	}
	for _, f := range files {
		err := recorder.RemoveFile(m.recDir, f.Path)
		switch {
		case errors.Is(err, recorder.ErrOutside):
			m.log.Warn("cluster: a file removed through another node is outside the recordings folder; not deleted", "file", f.Path, "error", err)
		case err != nil:
			m.log.Warn("cluster: delete a file removed through another node; trying again later", "file", f.Path, "error", err)
			continue
		default:
			m.log.Info("cluster: deleted a file removed through another node", "file", f.Path, "recording", f.RecordID)
			m.fileRemoved(f)
		}
		if err := m.store.FileRemovalDone(ctx, f.ID); err != nil {
			m.log.Warn("cluster: mark a file removal done", "file", f.Path, "error", err)
			return
		}
	}
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
		if f := r.p.Memory(); f != nil {
			return f, nil
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
