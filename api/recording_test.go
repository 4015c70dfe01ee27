package api

import (
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
	e.mustCreate("recording", recordingBody("r"))
	wantErr(t, e.post("/api/recording/create", recordingBody("r")), http.StatusConflict, CodeNameTaken, "recording_name")
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
	// A player's range requests get those bytes.
	res = e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil, withHeader("Range", "bytes=2-5"))
	if res.code != http.StatusPartialContent || string(res.raw) != "yp.." || res.header.Get("Content-Range") != "bytes 2-5/12" {
		t.Fatalf("range 2-5: %d %q %v", res.code, res.raw, res.header)
	}
	file := e.mustCreate("recording", recordingBody("file"))
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+file, nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+storage.NewID(), nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/..%2F..%2Fetc", nil), http.StatusNotFound, CodeNotFound, "")
	wantErr(t, e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
}

// TestRecordingMemoryDownloadsAtOnce: a download of a memory recording copies nothing, so
// several run at once (two viewers got 503 when one at a time did), up to maxMemoryDownloads
// of one recording: one more is answered 503 with Retry-After at once, as each download keeps
// the fragments it started with alive. Another recording is not held up by them.
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
	held := make([]<-chan result, maxMemoryDownloads)
	for i := range held {
		held[i] = download(id)
	}
	for deadline := time.Now().Add(10 * time.Second); e.procs.memoryOpens.Load() < maxMemoryDownloads; {
		if time.Now().After(deadline) {
			close(hold)
			t.Fatalf("%d of %d downloads at once served", e.procs.memoryOpens.Load(), maxMemoryDownloads)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case res := <-download(id):
		if res.code != http.StatusServiceUnavailable || res.header.Get("Retry-After") != "5" {
			close(hold)
			t.Fatalf("a download past %d: %d %v %s", maxMemoryDownloads, res.code, res.header, res.raw)
		}
	case <-time.After(10 * time.Second):
		close(hold)
		t.Fatalf("a download past %d was served", maxMemoryDownloads)
	}
	if n := e.procs.memoryOpens.Load(); n != maxMemoryDownloads {
		close(hold)
		t.Fatalf("%d snapshots opened, want %d", n, maxMemoryDownloads)
	}
	e.procs.memoryHold = nil
	if res := e.do(http.MethodGet, "/api/recording/download-memory/"+other, nil); res.code != http.StatusOK {
		close(hold)
		t.Fatalf("the other recording: %d %s", res.code, res.raw)
	}
	close(hold)
	for i, c := range held {
		if res := <-c; res.code != http.StatusOK || string(res.raw) != "ftyp....moov" {
			t.Fatalf("download %d: %d %q", i, res.code, res.raw)
		}
	}
	// Once they ended, the recording can be downloaded again.
	if res := e.do(http.MethodGet, "/api/recording/download-memory/"+id, nil); res.code != http.StatusOK {
		t.Fatalf("after them: %d %s", res.code, res.raw)
	}
}

// TestIDCountsForget: an id is counted up to the limit, and forgotten once its last request is
// out, so that the counts do not grow with the ids ever downloaded.
func TestIDCountsForget(t *testing.T) {
	var c idCounts
	for i := range 3 {
		if !c.enter("a", 3) {
			t.Fatalf("request %d of 3 refused", i+1)
		}
	}
	if c.enter("a", 3) {
		t.Fatal("a fourth request counted in with a limit of 3")
	}
	if !c.enter("b", 3) {
		t.Fatal("another id refused")
	}
	c.leave("a")
	if !c.enter("a", 3) {
		t.Fatal("a request refused after one left")
	}
	for range 3 {
		c.leave("a")
	}
	c.leave("b")
	if n := len(c.n); n != 0 {
		t.Errorf("%d ids kept after their last request", n)
	}
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
