package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/record"
	"github.com/sluicemedia/sluice/storage"
)

// fileSaveEvery is how often a growing file's size and duration are written to the store.
const fileSaveEvery = 2 * time.Second

// fileRecorder writes a Stream to files: one per publisher session, from its first key frame,
// closed (with its index) when the publisher leaves.
type fileRecorder struct {
	src      *stream.Stream
	store    *storage.Store
	files    recordingFiles
	recordID string
	format   string
	log      *slog.Logger
	// count is what a scrape reads; only this recorder's goroutine writes it.
	count *recCounters
	// emit gets file_opened, file_closed and file_repaired (nil: none); name is the
	// recording's.
	emit emitter
	name string

	cur *openFile // owned by run's goroutine
}

// openFile is the file being written.
type openFile struct {
	f     *os.File
	w     record.Writer
	entry storage.RecordedFile
	saved time.Time
	ctx   context.Context // ends when the session's publisher leaves
	stop  context.CancelFunc
	done  chan struct{} // closed when the session watcher returned
}

// run is the recorder part.
func (fr *fileRecorder) run(ctx context.Context, rep supervisor.Reporter) (err error) {
	rd, err := fr.src.NewReader("recorder")
	if err != nil {
		return err
	}
	defer rd.Close()
	defer fr.closeFile(nil)
	rep.SetState(supervisor.Running)
	for {
		rctx := ctx
		if fr.cur != nil {
			rctx = fr.cur.ctx
		}
		au, err := rd.Read(rctx)
		if err != nil {
			if ctx.Err() == nil && fr.cur != nil && fr.cur.ctx.Err() != nil {
				// The publisher left: write what is still queued, then close the file.
				old := fr.cur
				for rd.Pending() > 0 {
					au, err := rd.Read(ctx)
					if err != nil {
						break
					}
					if err := fr.write(ctx, au); err != nil {
						return err
					}
				}
				if fr.cur == old {
					fr.closeFile(nil)
				}
				continue
			}
			return readEnd(ctx, err)
		}
		if err := fr.write(ctx, au); err != nil {
			return err
		}
	}
}

// write writes one unit, opening a file at a session's first key frame and closing the
// previous one at a discontinuity.
func (fr *fileRecorder) write(ctx context.Context, au *media.AccessUnit) error {
	if au.Discontinuity && fr.cur != nil {
		fr.closeFile(nil)
	}
	if fr.cur == nil {
		tracks := fr.src.Tracks()
		if !keyGate(tracks, au) {
			return nil
		}
		if err := fr.openFile(ctx, tracks); err != nil {
			return err
		}
	}
	cur := fr.cur
	if err := cur.w.WriteUnit(au); err != nil {
		fr.count.writeErrors.Add(1)
		err = fmt.Errorf("recording %s: write %s: %w", fr.recordID, cur.entry.Path, err)
		fr.closeFile(err)
		return err
	}
	if time.Since(cur.saved) >= fileSaveEvery {
		cur.saved = time.Now()
		cur.entry.Size, cur.entry.Duration = cur.w.Size(), cur.w.Duration().Seconds()
		fr.count.openBytes.Store(cur.entry.Size)
		if err := fr.store.UpdateFile(ctx, cur.entry); errors.Is(err, storage.ErrNotFound) {
			// Removed through the API while being written: stop writing it; the next key frame
			// starts a new file.
			fr.log.Info("recorded file removed while recording", "file", cur.entry.Path)
			fr.dropFile()
		} else if err != nil && ctx.Err() == nil {
			fr.log.Warn("recorded file: saving its progress", "file", cur.entry.Path, "error", err)
		}
	}
	return nil
}

// openFile creates the session's file and its recordedFiles entry.
func (fr *fileRecorder) openFile(ctx context.Context, tracks []media.Track) error {
	start := time.Now().UTC()
	rel, f, err := fr.files.create(start, fr.format)
	if err != nil {
		fr.count.writeErrors.Add(1)
		return fmt.Errorf("recording %s: %w", fr.recordID, err)
	}
	w, err := record.NewWriter(fr.format, f, tracks)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("recording %s: %s file: %w", fr.recordID, fr.format, err)
	}
	entry := storage.RecordedFile{ID: storage.NewID(), RecordID: fr.recordID, Name: filepath.Base(rel), Path: rel,
		Format: fr.format, Size: w.Size(), Created: start, State: storage.FileRecording}
	if err := fr.store.AddFile(ctx, entry); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("recording %s: %w", fr.recordID, err)
	}
	sctx, stop := context.WithCancel(ctx)
	cur := &openFile{f: f, w: w, entry: entry, saved: time.Now(), ctx: sctx, stop: stop, done: make(chan struct{})}
	go fr.watchSession(cur)
	fr.cur = cur
	fr.count.files.Add(1)
	fr.count.openBytes.Store(entry.Size)
	fr.log.Info("recording to a new file", "file", rel)
	fr.emit.emit(fileEvent(events.FileOpened, fr.recordID, fr.name, entry))
	return nil
}

// watchSession ends cur.ctx when the stream's publisher leaves.
func (fr *fileRecorder) watchSession(cur *openFile) {
	defer close(cur.done)
	for {
		pub, changed := fr.src.WatchPublishing()
		if !pub {
			cur.stop()
			return
		}
		select {
		case <-changed:
		case <-cur.ctx.Done():
			return
		}
	}
}

// closeFile finishes the open file: its index, then its entry, "complete", or "repaired" when
// writing failed (cause) and the file was cut back to what is whole.
func (fr *fileRecorder) closeFile(cause error) {
	cur := fr.cur
	if cur == nil {
		return
	}
	fr.cur = nil
	cur.stop()
	<-cur.done
	e := cur.entry
	e.State = storage.FileComplete
	if cause == nil {
		cause = cur.w.Close()
	}
	if cause == nil {
		cause = cur.f.Sync()
	}
	e.Size, e.Duration = cur.w.Size(), cur.w.Duration().Seconds()
	if cause != nil {
		e.State = storage.FileRepaired
		if d, err := record.Repair(fr.format, cur.f); err == nil {
			e.Duration = d.Seconds()
		}
		if st, err := cur.f.Stat(); err == nil {
			e.Size = st.Size()
		}
		fr.count.repairs.Add(1)
		fr.log.Warn("recorded file cut back after a write error", "file", e.Path, "error", cause)
	}
	fr.count.closedBytes.Add(e.Size)
	fr.count.openBytes.Store(0)
	cur.f.Close()
	now := time.Now().UTC()
	e.Ended = &now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := fr.store.UpdateFile(ctx, e); err != nil && !errors.Is(err, storage.ErrNotFound) {
		fr.log.Warn("recorded file: saving its end", "file", e.Path, "error", err)
	}
	fr.log.Info("recorded file closed", "file", e.Path, "seconds", e.Duration, "bytes", e.Size, "state", e.State)
	typ := events.FileClosed
	if e.State == storage.FileRepaired {
		typ = events.FileRepaired
	}
	fr.emit.emit(fileEvent(typ, fr.recordID, fr.name, e))
}

// dropFile stops writing the open file without touching its (deleted) entry.
func (fr *fileRecorder) dropFile() {
	cur := fr.cur
	fr.cur = nil
	cur.stop()
	<-cur.done
	fr.count.closedBytes.Add(fr.count.openBytes.Swap(0))
	cur.f.Close()
}

// recordingFiles names a recording's files: <dir>/<name>/<name>_<UTC start>.<ext>, with the
// name sanitised so that nothing can leave dir.
type recordingFiles struct {
	dir, name string
}

// create makes a new file for a session that started at start; rel is relative to dir.
func (rf recordingFiles) create(start time.Time, ext string) (rel string, f *os.File, err error) {
	base := safeName(rf.name)
	folder := filepath.Join(rf.dir, base)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", nil, fmt.Errorf("recordings folder: %w", err)
	}
	stamp := start.UTC().Format("20060102T150405.000Z")
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s_%s.%s", base, stamp, ext)
		if i > 0 {
			name = fmt.Sprintf("%s_%s-%d.%s", base, stamp, i, ext)
		}
		f, err = os.OpenFile(filepath.Join(folder, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("create recorded file: %w", err)
		}
		return base + "/" + name, f, nil
	}
}

// safeName turns a recording name into a folder and file name: letters, digits, '-', '_' and
// '.' are kept, anything else becomes '_'; no leading dot; at most 100 bytes.
func safeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		return "recording"
	}
	return s
}
