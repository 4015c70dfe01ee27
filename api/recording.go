package api

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/sluicemedia/sluice/storage"
)

// recordingModule serves /api/recording: recording tasks (spec 4.3).
func recordingModule() *module {
	m := newModule(runsProcess, "recording", "recording", validateRecording, recordingSchema())
	m.attach = readHook{add: attachFiles, keys: []string{"recordedFiles"}}
	return m
}

// attachFiles adds recordedFiles (API.md "Recording files").
func attachFiles(s *server, r *http.Request, rec storage.Record, doc map[string]any) error {
	files, err := s.store.Files(r.Context(), rec.Meta().ID)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(files))
	for _, f := range files {
		out = append(out, renderFile(f))
	}
	doc["recordedFiles"] = out
	return nil
}

func renderFile(f storage.RecordedFile) map[string]any {
	return map[string]any{
		"id": f.ID, "name": f.Name, "path": f.Path, "format": f.Format, "size": f.Size,
		"duration": f.Duration, "created": FormatTime(f.Created), "ended": fmtTimePtr(f.Ended), "state": f.State,
	}
}

// removeFile deletes one recorded file from disk and from its recording's list.
func (s *server) removeFile(m *module) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var recordID, fileID string
		if err := s.readFields(r, func(f *fields) {
			recordID, _ = f.objectID("record_id", true)
			fileID, _ = f.objectID("file_id", true)
		}); err != nil {
			s.fail(w, r, err)
			return
		}
		if _, err := s.load(r, m, recordID); err != nil {
			s.fail(w, r, err)
			return
		}
		file, err := s.store.File(ctx, fileID)
		if errors.Is(err, storage.ErrNotFound) || (err == nil && file.RecordID != recordID) {
			s.fail(w, r, errNotFound("recording %s has no file %s", recordID, fileID))
			return
		} else if err != nil {
			s.fail(w, r, err)
			return
		}
		if err := s.procs.RemoveFile(ctx, file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.fail(w, r, err)
			return
		}
		if err := s.store.DeleteFile(ctx, fileID); err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.fail(w, r, err)
			return
		}
		writeSuccess(w)
	}
}

var fileTypes = map[string]string{"mp4": "video/mp4", "mov": "video/quicktime", "avi": "video/x-msvideo", "flv": "video/x-flv"}

// download serves a recorded file with Range support. The id is checked before any lookup, so
// it never reaches the filesystem unless it names a stored file.
func (s *server) download(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "file_id")
	if !storage.ValidID(id) {
		s.fail(w, r, errNotFound("no recorded file has id %q", id))
		return
	}
	file, err := s.store.File(r.Context(), id)
	if err != nil {
		s.fail(w, r, fileNotFound(id, err))
		return
	}
	// In a cluster the file is on the disk of the node that recorded it.
	if s.forward(w, r, file.Node) {
		return
	}
	rc, mod, err := s.procs.OpenFile(r.Context(), file)
	if err != nil {
		s.fail(w, r, fileNotFound(id, err))
		return
	}
	defer rc.Close()
	if ct := fileTypes[file.Format]; ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": file.Name}))
	http.ServeContent(w, r, file.Name, mod, rc)
}

// forward answers r from another node of a cluster that holds what it asks for (Cluster.Forward)
// and reports true, or reports false for this node to answer it.
func (s *server) forward(w http.ResponseWriter, r *http.Request, node string) bool {
	if s.cfg.Cluster == nil || node == "" {
		return false
	}
	done, err := s.cfg.Cluster.Forward(w, r, node)
	if err != nil {
		s.fail(w, r, err)
		return true
	}
	return done
}

func fileNotFound(id string, err error) error {
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return errNotFound("no recorded file has id %s", id)
	}
	return err
}

// downloadMemory serves what a RECORDING_STREAM_TO_MEMORY task holds as one MP4.
func (s *server) downloadMemory(m *module) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "record_id")
		if !storage.ValidID(id) {
			s.fail(w, r, errNotFound("no recording has id %q", id))
			return
		}
		rec, err := s.load(r, m, id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if rec.(*storage.Recording).RecordingType != RecordingToMemory {
			s.fail(w, r, errNotFound("recording %s records to files, not to memory", id))
			return
		}
		// In a cluster the memory is the process's, on the node that runs it.
		if s.cfg.Cluster != nil && s.forward(w, r, s.cfg.Cluster.Owner(r.Context(), m.kind, id)) {
			return
		}
		// Each download holds a copy of what the recording holds (up to 1 GiB) for as long as
		// its client takes to read it: one at a time, so that the copies are bounded. Another
		// waits a while for its turn (a browser's player opens a range request before the one
		// it gives up has ended), then gets 503.
		if !s.memDownloads.enter(r.Context(), id, memoryDownloadWait) {
			s.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: memoryDownloadRetry,
				Message: "recording " + id + " is being downloaded by another request; try again when it ends"})
			return
		}
		defer s.memDownloads.leave(id)
		rs, err := s.procs.MemoryMP4(r.Context(), id)
		if err != nil {
			s.fail(w, r, fileNotFound(id, err))
			return
		}
		if c, ok := rs.(io.Closer); ok {
			defer c.Close()
		}
		name := rec.UniqueName() + ".mp4"
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		http.ServeContent(w, r, name, s.now(), rs)
	}
}

// memoryDownloadWait is how long a download of a memory recording waits for another one of
// the same recording to end; memoryDownloadRetry the Retry-After when it did not.
const (
	memoryDownloadWait  = 5 * time.Second
	memoryDownloadRetry = 5 * time.Second
)

// oneAtATime is a set of ids each taken by one request at a time.
type oneAtATime struct {
	mu  sync.Mutex
	ids map[string]*turn
}

// turn is an id's slot (a channel of one) and the requests holding or waiting for it.
type turn struct {
	slot  chan struct{}
	users int
}

// enter takes id, waiting up to wait (or until ctx ends) while another request holds it; it
// reports whether it took it. Each true must be followed by one leave.
func (o *oneAtATime) enter(ctx context.Context, id string, wait time.Duration) bool {
	o.mu.Lock()
	t := o.ids[id]
	if t == nil {
		if o.ids == nil {
			o.ids = map[string]*turn{}
		}
		t = &turn{slot: make(chan struct{}, 1)}
		o.ids[id] = t
	}
	t.users++
	o.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t.slot <- struct{}{}:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	o.done(id, t)
	return false
}

// leave gives id back.
func (o *oneAtATime) leave(id string) {
	o.mu.Lock()
	t := o.ids[id]
	o.mu.Unlock()
	<-t.slot
	o.done(id, t)
}

// done counts a request out of id's turn, forgetting the id with the last one.
func (o *oneAtATime) done(id string, t *turn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(o.ids, id)
	}
}

func recordingSchema() map[string]any {
	return jsObject([]string{"recording_name", "recording_type", "input", "output_format"}, map[string]any{
		"recording_name":      jsString(1, 128),
		"recording_type":      jsEnum(RecordingToFile, RecordingToMemory),
		"input":               jsRef("Input"),
		"output_format":       jsEnum(outputFormats...),
		"memory_duration_sec": jsInt(1, 3600),
		"transcoding":         jsRef("Transcoding"),
		"active":              jsBool(true),
	})
}
