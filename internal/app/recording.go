package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/recorder"
	"github.com/sluicemedia/sluice/packager/record"
	"github.com/sluicemedia/sluice/storage"
)

// recordingPipeline is an input (optionally transcoded) written to files, a new one per
// publisher session, or kept in memory.
func recordingPipeline(in *inputs, tr *transcoder, st *storage.Store, dir string, r *storage.Recording, repaired *bootRepairs, emit emitter, log *slog.Logger) (*Pipeline, error) {
	p, err := processPipeline(in, r.ID, r.Input, log)
	if err != nil {
		return nil, err
	}
	src := tr.attach(p, r.ID, r.Transcoding, log)
	if r.RecordingType == api.RecordingToMemory {
		window := time.Duration(r.MemoryDurationSec) * time.Second
		if window <= 0 {
			window = 300 * time.Second
		}
		mem := record.NewMemoryWith(record.MemoryOptions{Window: window, Limit: budget.Limit{MaxBytes: in.cfg.MemoryRecordingMaxBytes}, Log: log})
		p.Sinks = append(p.Sinks, Part{Name: "memory", Run: recorder.Memory(src, mem, log)})
		p.Memory = mem.Open
		return p, nil
	}
	id, name := r.ID, r.RecordingName
	fr := recorder.New(recorder.Options{Source: src, Store: fileStore{st}, Dir: dir, Name: name, RecordID: id,
		Format: r.OutputFormat, Log: log, OnFile: func(e recorder.Entry) {
			emit.emit(fileEvent(fileEventType(e.State), id, name, storage.RecordedFile(e)))
		}})
	p.Sinks = append(p.Sinks, Part{Name: "recorder", Run: fr.Run})
	p.Figures = append(p.Figures, recordingFigures(fr.Counters(), func() int64 { return repaired.get(id) }))
	return p, nil
}

// fileEventType is the event of a recorded file entering a state.
func fileEventType(state string) string {
	switch state {
	case recorder.StateRecording:
		return events.FileOpened
	case recorder.StateRepaired:
		return events.FileRepaired
	}
	return events.FileClosed
}

// fileStore keeps a recorder's entries as the store's recorded files.
type fileStore struct{ st *storage.Store }

var _ recorder.Store = fileStore{}

// AddFile implements recorder.Store.
func (s fileStore) AddFile(ctx context.Context, e recorder.Entry) (string, error) {
	e.ID = storage.NewID()
	return e.ID, s.st.AddFile(ctx, storage.RecordedFile(e))
}

// UpdateFile implements recorder.Store.
func (s fileStore) UpdateFile(ctx context.Context, e recorder.Entry) error {
	err := s.st.UpdateFile(ctx, storage.RecordedFile(e))
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w: %w", recorder.ErrGone, err)
	}
	return err
}

// repairRecordings repairs the files a crash left "recording" (recorder.Repair) and marks them
// "repaired". It runs at start, before any recorder. Each repair is counted in repaired for the
// recording's metrics, and is a file_repaired event.
func repairRecordings(ctx context.Context, st *storage.Store, dir string, repaired *bootRepairs, emit emitter, log *slog.Logger) {
	files, err := st.FilesInState(ctx, storage.FileRecording)
	if err != nil {
		log.Error("listing recordings left open by a crash", "error", err)
		return
	}
	for _, f := range files {
		repaired.add(f.RecordID)
		f = storage.RecordedFile(recorder.Repair(dir, recorder.Entry(f), log))
		if err := st.UpdateFile(ctx, f); err != nil {
			log.Error("recorded file: saving its repair", "file", f.Path, "error", err)
		}
		name := recordName(ctx, st, storage.RecordRef{Module: storage.ModuleRecording, ID: f.RecordID})
		emit.emit(fileEvent(events.FileRepaired, f.RecordID, name, f))
	}
}
