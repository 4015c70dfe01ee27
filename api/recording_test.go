package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// addFile gives recording rec a file with content on the fake disk.
func (e *env) addFile(rec, content string) storage.RecordedFile {
	ended := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec, Name: "cam_20261121T140000Z.mp4", Path: "cam/cam_20261121T140000Z.mp4",
		Format: "mp4", Size: int64(len(content)), Duration: 3600.5, Created: time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC),
		Ended: &ended, State: storage.FileComplete}
	e.store.addFile(f)
	e.procs.content[f.ID] = []byte(content)
	return f
}

func TestRecordingCreateAndFiles(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("recording", recordingBody("cam"))
	f := e.addFile(id, "0123456789")
	r := e.getByID("recording", id)
	if r["recording_type"] != RecordingToFile || r["output_format"] != "mp4" || r["memory_duration_sec"] != nil {
		t.Fatalf("record %v", r)
	}
	files := r["recordedFiles"].([]any)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	got := files[0].(map[string]any)
	want := map[string]any{"id": f.ID, "name": f.Name, "path": f.Path, "format": "mp4", "size": 10.0, "duration": 3600.5,
		"created": "2026-11-21T14:00:00.000Z", "ended": "2026-11-21T15:00:00.000Z", "state": "complete"}
	if len(got) != len(want) {
		t.Fatalf("entry %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	all := e.post("/api/recording/getAll", nil).arr()
	if len(all) != 1 || len(all[0].(map[string]any)["recordedFiles"].([]any)) != 1 {
		t.Fatalf("getAll %v", all)
	}
}

func TestRecordingValidation(t *testing.T) {
	e := newEnv(t)
	e.wantInvalid(t, "/api/recording/create", recordingBody("r"), []invalid{
		{map[string]any{"recording_name": nil}, "recording_name"},
		{map[string]any{"recording_type": "RECORDING_TO_TAPE"}, "recording_type"},
		{map[string]any{"recording_type": nil}, "recording_type"},
		{map[string]any{"output_format": "mkv"}, "output_format"},
		{map[string]any{"output_format": nil}, "output_format"},
		{map[string]any{"input": nil}, "input"},
		{map[string]any{"recording_type": "RECORDING_STREAM_TO_MEMORY", "memory_duration_sec": 3601}, "memory_duration_sec"},
		{map[string]any{"transcoding": map[string]any{"audio_transcoding": "opus"}}, "transcoding.audio_trancoding"},
	})
}

func TestRecordingMemory(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("recording", merge(recordingBody("mem"), map[string]any{"recording_type": RecordingToMemory}))
	if r := e.getByID("recording", id); r["memory_duration_sec"] != 300.0 {
		t.Fatalf("default memory_duration_sec: %v", r["memory_duration_sec"])
	}
	e.procs.memory = []byte("ftyp....moov")
	res := e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil)
	if res.code != http.StatusOK || string(res.raw) != "ftyp....moov" || res.header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("%d %q %v", res.code, res.raw, res.header)
	}
	file := e.mustCreate("recording", recordingBody("file"))
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+file, nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+storage.NewID(), nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/..%2F..%2Fetc", nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
}

// TestRecordingMemoryDownloadsAtOnce: each download of a memory recording holds a copy of what
// it holds (up to 1 GiB) for as long as its client reads; a second download of the same
// recording while one is under way waits for it a while, then is answered 503 instead of
// making another copy (they were all served: 32 slow clients held 32 copies). One that the
// first ends in time for is served.
func TestRecordingMemoryDownloadsAtOnce(t *testing.T) {
	e := newEnv(t)
	id := e.mustCreate("recording", merge(recordingBody("mem"), map[string]any{"recording_type": RecordingToMemory}))
	other := e.mustCreate("recording", merge(recordingBody("other"), map[string]any{"recording_type": RecordingToMemory}))
	e.procs.memory = []byte("ftyp....moov")
	hold := make(chan struct{})
	e.procs.memoryHold = hold
	download := func(id string) <-chan result {
		c := make(chan result, 1)
		go func() { c <- e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil) }()
		return c
	}
	first := download(id)
	for e.procs.memoryCopies.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	results := make([]<-chan result, 32)
	for i := range results {
		results[i] = download(id)
	}
	for _, c := range results {
		select {
		case res := <-c:
			if res.code != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
				close(hold)
				t.Fatalf("a download during another: %d %s", res.code, res.raw)
			}
		case <-time.After(memoryDownloadWait + 5*time.Second):
			n := e.procs.memoryCopies.Load()
			close(hold)
			t.Fatalf("downloads during another are served: %d copies of the recording held at once", n)
		}
	}
	if n := e.procs.memoryCopies.Load(); n != 1 {
		t.Fatalf("%d copies made, want 1", n)
	}
	// Another recording is not held up by it.
	e.procs.memoryHold = nil
	if res := e.do(http.MethodGet, "/api/recording/download-memory/"+other, nil); res.code != http.StatusOK {
		t.Fatalf("the other recording: %d %s", res.code, res.raw)
	}
	// A download that waits while the first ends is served.
	second := download(id)
	time.Sleep(200 * time.Millisecond)
	close(hold)
	for name, c := range map[string]<-chan result{"first": first, "second": second} {
		if res := <-c; res.code != http.StatusOK || string(res.raw) != "ftyp....moov" {
			t.Fatalf("the %s download: %d %q", name, res.code, res.raw)
		}
	}
	// Once they ended, the recording can be downloaded again.
	if res := e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil); res.code != http.StatusOK {
		t.Fatalf("after the first: %d %s", res.code, res.raw)
	}
}

// TestOneAtATimeForgets: an id's turn is forgotten once its last request, served or given up,
// is out, so that the set does not grow with the ids ever downloaded.
func TestOneAtATimeForgets(t *testing.T) {
	var o oneAtATime
	ctx := context.Background()
	if !o.enter(ctx, "a", time.Second) {
		t.Fatal("a free id was not taken")
	}
	if o.enter(ctx, "a", 10*time.Millisecond) {
		t.Fatal("a held id was taken again")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if o.enter(cancelled, "a", time.Hour) {
		t.Fatal("a held id was taken by a request that ended")
	}
	o.leave("a")
	if n := len(o.ids); n != 0 {
		t.Errorf("%d ids kept after the last request", n)
	}
	if !o.enter(ctx, "a", time.Second) {
		t.Fatal("a given-back id was not taken")
	}
	o.leave("a")
}

func TestRecordingRemoveFile(t *testing.T) {
	e := newEnv(t)
	a := e.mustCreate("recording", recordingBody("a"))
	b := e.mustCreate("recording", recordingBody("b"))
	fa := e.addFile(a, "aaa")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": b, "file_id": fa.ID}), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": a, "file_id": storage.NewID()}), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": storage.NewID(), "file_id": fa.ID}), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": "../x", "file_id": fa.ID}), http.StatusBadRequest, CodeValidation, "record_id")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": a, "file_id": "a/b"}), http.StatusBadRequest, CodeValidation, "file_id")
	wantErr(t, e.post("/api/recording/removeFile", map[string]any{"record_id": a}), http.StatusBadRequest, CodeValidation, "file_id")
	e.procs.took()
	wantSuccess(t, e.post("/api/recording/removeFile", map[string]any{"record_id": a, "file_id": fa.ID}))
	if got := e.procs.took(); !slices.Equal(got, []string{"removefile " + fa.ID}) {
		t.Fatalf("calls %v", got)
	}
	if files := e.getByID("recording", a)["recordedFiles"].([]any); len(files) != 0 {
		t.Fatalf("file still listed: %v", files)
	}
}

func TestRecordingRemoveKeepsFilesOnDisk(t *testing.T) {
	e := newEnv(t)
	a := e.mustCreate("recording", recordingBody("a"))
	f := e.addFile(a, "aaa")
	e.procs.took()
	wantSuccess(t, e.do(http.MethodDelete, "/api/recording/remove", map[string]any{"id": a}))
	if got := e.procs.took(); !slices.Equal(got, []string{"remove MODULE_RECORDING " + a}) {
		t.Fatalf("calls %v", got)
	}
	if _, ok := e.procs.content[f.ID]; !ok {
		t.Fatal("remove deleted a recorded file from disk")
	}
}

func TestRecordingDownload(t *testing.T) {
	e := newEnv(t)
	a := e.mustCreate("recording", recordingBody("a"))
	f := e.addFile(a, "0123456789")
	path := "/api/recording/download/" + f.ID
	res := e.do(http.MethodGet, path, nil)
	if res.code != http.StatusOK || string(res.raw) != "0123456789" || res.header.Get("Content-Type") != "video/mp4" ||
		!strings.Contains(res.header.Get("Content-Disposition"), f.Name) {
		t.Fatalf("%d %q %v", res.code, res.raw, res.header)
	}
	res = e.do(http.MethodGet, path, nil, withHeader("Range", "bytes=2-5"))
	if res.code != http.StatusPartialContent || string(res.raw) != "2345" || res.header.Get("Content-Range") != "bytes 2-5/10" {
		t.Fatalf("range: %d %q %v", res.code, res.raw, res.header)
	}
	res = e.do(http.MethodGet, path+"?token="+e.token, nil, noToken)
	if res.code != http.StatusOK {
		t.Fatalf("?token: %d %s", res.code, res.raw)
	}
	res = e.do(http.MethodGet, path, nil, noToken, withHeader("Authorization", "Bearer "+e.token))
	if res.code != http.StatusOK {
		t.Fatalf("bearer: %d %s", res.code, res.raw)
	}
	wantErr(t, e.do(http.MethodGet, path+"?token=nope", nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, e.do(http.MethodGet, path, nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	// ?token= is for download links only.
	wantErr(t, e.post("/api/vod/getAll?token="+e.token, nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download/"+storage.NewID(), nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download/..%2F..%2Fetc%2Fpasswd", nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download/not-an-id", nil), http.StatusNotFound, CodeNotFound, "")
	// A file whose bytes are gone from disk.
	delete(e.procs.content, f.ID)
	wantErr(t, e.do(http.MethodGet, path, nil), http.StatusNotFound, CodeNotFound, "")
}
