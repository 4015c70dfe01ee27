package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
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
		mem := record.NewMemoryWith(record.MemoryOptions{Window: window, MaxBytes: in.cfg.MemoryRecordingMaxBytes, Log: log})
		p.Sinks = append(p.Sinks, Part{Name: "memory", Run: memoryRecorder(src, mem, log)})
		p.Memory = mem.MP4
		return p, nil
	}
	fr := &fileRecorder{src: src, store: st, files: recordingFiles{dir: dir, name: r.RecordingName},
		recordID: r.ID, format: r.OutputFormat, log: log, count: &recCounters{}, emit: emit, name: r.RecordingName}
	p.Sinks = append(p.Sinks, Part{Name: "recorder", Run: fr.run})
	id := r.ID
	p.Figures = append(p.Figures, recordingFigures(fr.count, func() int64 { return repaired.get(id) }))
	return p, nil
}

// keyGate tells whether a unit may start a file or a memory session: with video, only a video
// key frame.
func keyGate(tracks []media.Track, au *media.AccessUnit) bool {
	for _, t := range tracks {
		if t.Codec.IsVideo() {
			return t.ID == au.Track && au.Key
		}
	}
	return true
}

// memoryRecorder feeds a Memory: each publisher session is a SetTracks, and the session's
// media is kept from its first key frame.
func memoryRecorder(src *stream.Stream, mem *record.Memory, log *slog.Logger) supervisor.RunFunc {
	return func(ctx context.Context, rep supervisor.Reporter) error {
		rd, err := src.NewReader("memory recorder")
		if err != nil {
			return err
		}
		defer rd.Close()
		rep.SetState(supervisor.Running)
		started, waitKey := false, true
		var tracks []media.Track
		for {
			au, err := rd.Read(ctx)
			if err != nil {
				return readEnd(ctx, err)
			}
			if !started || au.Discontinuity {
				started, waitKey = true, true
				tracks = src.Tracks()
				if err := mem.SetTracks(tracks); err != nil {
					return fmt.Errorf("memory recording: %w", err)
				}
			}
			if waitKey {
				if !keyGate(tracks, au) {
					continue
				}
				waitKey = false
			}
			if err := mem.Write(au); err != nil {
				log.Debug("memory recording: unit dropped", "error", err)
			}
		}
	}
}

// readEnd turns the error that ended a reader's loop into the part's result.
func readEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("recorder: %w", supervisor.ErrInputGone)
	}
	return err
}
