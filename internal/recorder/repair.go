package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/packager/record"
	"github.com/sluicemedia/sluice/storage"
)

// repairRecordings repairs the files a crash left "recording": each is cut back to its last whole
// fragment, gets its index, and is marked "repaired". It runs at start, before any recorder.
// Each repair is counted in repaired for the recording's metrics.
// Each repaired file is a file_repaired event.
func repairRecordings(ctx context.Context, st *storage.Store, dir string, repaired *bootRepairs, emit emitter, log *slog.Logger) {
	files, err := st.FilesInState(ctx, storage.FileRecording)
	if err != nil {
		log.Error("listing recordings left open by a crash", "error", err)
		return
	}
	for _, e := range files {
		repaired.add(e.RecordID)
		e = repairFile(ctx, st, dir, e, log)
		name := recordName(ctx, st, storage.RecordRef{Module: storage.ModuleRecording, ID: e.RecordID})
		emit.emit(fileEvent(events.FileRepaired, e.RecordID, name, e))
	}
}

func repairFile(ctx context.Context, st *storage.Store, dir string, e storage.RecordedFile, log *slog.Logger) storage.RecordedFile {
	e.State = storage.FileRepaired
	path := filepath.Join(dir, filepath.Clean("/"+e.Path))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		log.Warn("recorded file left open by a crash is gone", "file", e.Path)
		e.Size, e.Duration = 0, 0
	case err != nil:
		log.Error("recorded file left open by a crash cannot be opened", "file", e.Path, "error", err)
	default:
		d, err := record.Repair(e.Format, f)
		if err != nil {
			log.Warn("recorded file left open by a crash has nothing to keep", "file", e.Path, "error", err)
		}
		e.Duration = d.Seconds()
		if fi, err := f.Stat(); err == nil {
			e.Size = fi.Size()
			mt := fi.ModTime().UTC()
			e.Ended = &mt
		}
		if err := f.Sync(); err != nil {
			log.Warn("recorded file: sync after repair", "file", e.Path, "error", err)
		}
		f.Close()
		log.Info("recorded file repaired after a crash", "file", e.Path, "seconds", e.Duration, "bytes", e.Size)
	}
	if e.Ended == nil {
		now := time.Now().UTC()
		e.Ended = &now
	}
	if err := st.UpdateFile(ctx, e); err != nil {
		log.Error("recorded file: saving its repair", "file", e.Path, "error", err)
	}
	return e
}
