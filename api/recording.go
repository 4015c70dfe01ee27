package api

import (
	"errors"
	"fmt"
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
		if !s.memDownloads.enter(id, maxMemoryDownloads) {
			s.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: memoryDownloadRetry,
				Message: fmt.Sprintf("recording %s is being downloaded by %d requests already; try again when one ends", id, maxMemoryDownloads)})
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

// maxMemoryDownloads is how many downloads of one memory recording run at once;
// memoryDownloadRetry is the Retry-After of one more. A download copies nothing, but keeps the
// fragments it started with alive after the recording lets them go, until its client has read
// them: each slow client can hold up to a whole recording's bytes (1 GiB by default).
const (
	maxMemoryDownloads  = 8
	memoryDownloadRetry = 5 * time.Second
)

// idCounts counts the requests under way for each id.
type idCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// enter counts a request for id in unless limit are under way, and reports whether it did.
// Each true must be followed by one leave.
func (c *idCounts) enter(id string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[id] >= limit {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
	return true
}

// leave counts a request for id out, forgetting id with the last one.
func (c *idCounts) leave(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[id]--; c.n[id] <= 0 {
		delete(c.n, id)
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
