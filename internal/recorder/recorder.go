// Package recorder is the recording sink: it writes a stream to files, one per publisher
// session, and keeps their entries in a store; or keeps the last minutes in memory.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/record"
)

// fileSaveEvery is how often a growing file's size and duration are written to the store.
const fileSaveEvery = 2 * time.Second

// States of a recorded file.
const (
	StateRecording = "recording" // being written
	StateComplete  = "complete"  // closed with its index
	StateRepaired  = "repaired"  // cut back to what is whole after a write error or a crash
)

// Entry is a recorded file as the store keeps it. Its fields are those of the store's record,
// so that one converts to the other.
type Entry struct {
	ID       string
	RecordID string
	Name     string
	Path     string // relative to the recordings folder
	Format   string
	Size     int64   // bytes
	Duration float64 // seconds
	Created  time.Time
	Ended    *time.Time
	State    string
	// Node is the cluster node whose disk holds the file, as the store keeps it (a recorder
	// neither reads nor sets it).
	Node string
}

// ErrGone is what a Store's UpdateFile wraps when the entry was removed (through the API while
// the file was written).
var ErrGone = errors.New("recorded file entry removed")

// Store keeps the entries of the recorded files.
type Store interface {
	// AddFile stores a new entry and returns the id it gave it.
	AddFile(ctx context.Context, e Entry) (id string, err error)
	// UpdateFile replaces the entry with e.ID; it wraps ErrGone when there is none.
	UpdateFile(ctx context.Context, e Entry) error
}

// Counters are a file recording's figures, written by its recorder goroutine and read by a
// metrics scrape.
type Counters struct {
	Files       atomic.Int64 // files opened
	ClosedBytes atomic.Int64 // bytes of the files closed
	OpenBytes   atomic.Int64 // bytes of the open file at its last save
	WriteErrors atomic.Int64
	Repairs     atomic.Int64 // files cut back after a write error
}

// Options set up a file Recorder.
type Options struct {
	// Source is the stream recorded.
	Source *stream.Stream
	// Store keeps the files' entries.
	Store Store
	// Dir is the recordings folder; the files go to Dir/<Name>/<Name>_<UTC start>.<Format>.
	Dir string
	// Name is the recording's name (sanitised for the folder and files); RecordID its id.
	Name, RecordID string
	// Format is the file format: mp4, mov, flv or avi (record.NewWriter).
	Format string
	// Log gets the recorder's messages; nil: slog.Default.
	Log *slog.Logger
	// OnFile, when set, is called with the entry of each file opened (StateRecording), closed
	// (StateComplete) or cut back after a write error (StateRepaired).
	OnFile func(Entry)
}

// Recorder writes a Stream to files: one per publisher session, from its first key frame,
// closed (with its index) when the publisher leaves.
type Recorder struct {
	o     Options
	count Counters

	cur *openFile // owned by Run's goroutine
}

// openFile is the file being written.
type openFile struct {
	f     *os.File
	w     record.Writer
	entry Entry
	saved time.Time
	ctx   context.Context // ends when the session's publisher leaves
	stop  context.CancelFunc
	done  chan struct{} // closed when the session watcher returned
}

// New returns a file recorder; Run runs it.
func New(o Options) *Recorder {
	opt.Zero(&o.Log, slog.Default())
	return &Recorder{o: o}
}

// Counters are the recorder's figures.
func (fr *Recorder) Counters() *Counters { return &fr.count }

// Run records until ctx ends or the source is closed; it is a supervised part.
func (fr *Recorder) Run(ctx context.Context, rep supervisor.Reporter) (err error) {
	rd, err := fr.o.Source.NewReader("recorder")
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

// onFile reports an entry to Options.OnFile.
func (fr *Recorder) onFile(e Entry) {
	if fr.o.OnFile != nil {
		fr.o.OnFile(e)
	}
}

// write writes one unit, opening a file at a session's first key frame and closing the
// previous one at a discontinuity.
func (fr *Recorder) write(ctx context.Context, au *media.AccessUnit) error {
	if au.Discontinuity && fr.cur != nil {
		fr.closeFile(nil)
	}
	if fr.cur == nil {
		tracks := fr.o.Source.Tracks()
		if !keyGate(tracks, au) {
			return nil
		}
		if err := fr.openFile(ctx, tracks); err != nil {
			return err
		}
	}
	cur := fr.cur
	if err := cur.w.WriteUnit(au); err != nil {
		fr.count.WriteErrors.Add(1)
		err = fmt.Errorf("recording %s: write %s: %w", fr.o.RecordID, cur.entry.Path, err)
		fr.closeFile(err)
		return err
	}
	if time.Since(cur.saved) >= fileSaveEvery {
		cur.saved = time.Now()
		cur.entry.Size, cur.entry.Duration = cur.w.Size(), cur.w.Duration().Seconds()
		fr.count.OpenBytes.Store(cur.entry.Size)
		if err := fr.o.Store.UpdateFile(ctx, cur.entry); errors.Is(err, ErrGone) {
			// Removed through the API while being written: stop writing it; the next key frame
			// starts a new file.
			fr.o.Log.Info("recorded file removed while recording", "file", cur.entry.Path)
			fr.dropFile()
		} else if err != nil && ctx.Err() == nil {
			fr.o.Log.Warn("recorded file: saving its progress", "file", cur.entry.Path, "error", err)
		}
	}
	return nil
}

// openFile creates the session's file and its entry.
func (fr *Recorder) openFile(ctx context.Context, tracks []media.Track) error {
	start := time.Now().UTC()
	rel, f, err := createFile(fr.o.Dir, fr.o.Name, start, fr.o.Format)
	if err != nil {
		fr.count.WriteErrors.Add(1)
		return fmt.Errorf("recording %s: %w", fr.o.RecordID, err)
	}
	w, err := record.NewWriter(fr.o.Format, f, tracks)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("recording %s: %s file: %w", fr.o.RecordID, fr.o.Format, err)
	}
	entry := Entry{RecordID: fr.o.RecordID, Name: filepath.Base(rel), Path: rel,
		Format: fr.o.Format, Size: w.Size(), Created: start, State: StateRecording}
	if entry.ID, err = fr.o.Store.AddFile(ctx, entry); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("recording %s: %w", fr.o.RecordID, err)
	}
	sctx, stop := context.WithCancel(ctx)
	cur := &openFile{f: f, w: w, entry: entry, saved: time.Now(), ctx: sctx, stop: stop, done: make(chan struct{})}
	go fr.watchSession(cur)
	fr.cur = cur
	fr.count.Files.Add(1)
	fr.count.OpenBytes.Store(entry.Size)
	fr.o.Log.Info("recording to a new file", "file", rel)
	fr.onFile(entry)
	return nil
}

// watchSession ends cur.ctx when the stream's publisher leaves.
func (fr *Recorder) watchSession(cur *openFile) {
	defer close(cur.done)
	for {
		pub, changed := fr.o.Source.WatchPublishing()
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
func (fr *Recorder) closeFile(cause error) {
	cur := fr.cur
	if cur == nil {
		return
	}
	fr.cur = nil
	cur.stop()
	<-cur.done
	e := cur.entry
	e.State = StateComplete
	if cause == nil {
		cause = cur.w.Close()
	}
	if cause == nil {
		cause = cur.f.Sync()
	}
	e.Size, e.Duration = cur.w.Size(), cur.w.Duration().Seconds()
	if cause != nil {
		e.State = StateRepaired
		if d, err := record.Repair(fr.o.Format, cur.f); err == nil {
			e.Duration = d.Seconds()
		}
		if st, err := cur.f.Stat(); err == nil {
			e.Size = st.Size()
		}
		fr.count.Repairs.Add(1)
		fr.o.Log.Warn("recorded file cut back after a write error", "file", e.Path, "error", cause)
	}
	fr.count.ClosedBytes.Add(e.Size)
	fr.count.OpenBytes.Store(0)
	cur.f.Close()
	now := time.Now().UTC()
	e.Ended = &now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := fr.o.Store.UpdateFile(ctx, e); err != nil && !errors.Is(err, ErrGone) {
		fr.o.Log.Warn("recorded file: saving its end", "file", e.Path, "error", err)
	}
	fr.o.Log.Info("recorded file closed", "file", e.Path, "seconds", e.Duration, "bytes", e.Size, "state", e.State)
	fr.onFile(e)
}

// dropFile stops writing the open file without touching its (deleted) entry.
func (fr *Recorder) dropFile() {
	cur := fr.cur
	fr.cur = nil
	cur.stop()
	<-cur.done
	fr.count.ClosedBytes.Add(fr.count.OpenBytes.Swap(0))
	cur.f.Close()
}
