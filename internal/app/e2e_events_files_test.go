package app

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// fileOf is the file entry of a recording file event.
func fileOf(t *testing.T, e sseEvent) map[string]any {
	t.Helper()
	f, ok := e.Data["file"].(map[string]any)
	if !ok {
		t.Fatalf("event %v has no file entry: %v", e, e.Data)
	}
	return f
}

// TestRecordingFileEvents: a recording's file events carry its entry as recordedFiles shows
// it: file_opened when a file starts, file_closed when the recording stops, file_repaired
// when the server was killed (kill -9) while a file was open and repaired it at the next
// start (read back from the history with Last-Event-ID), file_removed on removeFile.
func TestRecordingFileEvents(t *testing.T) {
	t.Parallel()
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	c := startChild(t, addr, data)
	files := c.ts.follow("module=recording&type=file_opened,file_closed,file_repaired,file_removed", "")
	defer files.close()
	rec := c.ts.create("recording", recordingBody("ev-files", tinyTestVideo()))

	// wantEntry checks an event's file entry against the recording's list (want state).
	wantEntry := func(e sseEvent, entry recordedFile, state string) {
		t.Helper()
		f := fileOf(t, e)
		if e.Data["id"] != rec || e.Data["name"] != "ev-files" || e.Data["module"] != "MODULE_RECORDING" ||
			f["id"] != entry.ID || f["path"] != entry.Path || f["name"] != entry.Name || f["format"] != "mp4" || f["state"] != state {
			t.Fatalf("%v: data %v, want recording %s and entry %+v in state %s", e, e.Data, rec, entry, state)
		}
		if state != "recording" && (f["ended"] == nil || f["size"] != float64(entry.Size) || f["duration"] != entry.Duration || entry.Size == 0) {
			t.Fatalf("%v: entry %v, want the list's %+v, ended", e, f, entry)
		}
	}

	// Opened, then closed by a stop.
	opened := files.until(30*time.Second, "file_opened", isType("file_opened"))
	fs := c.ts.recordedFiles(rec)
	if len(fs) != 1 {
		t.Fatalf("files %+v after file_opened", fs)
	}
	wantEntry(opened[len(opened)-1], fs[0], "recording")
	testutil.Eventually(t, 20*time.Second, "2 s recorded", func() bool {
		fs = c.ts.recordedFiles(rec)
		return fs[0].Duration >= 2
	})
	c.ts.call("/api/recording/stop", map[string]any{"id": rec}, http.StatusOK, nil)
	closed := files.until(10*time.Second, "file_closed", isType("file_closed"))
	first := c.ts.recordedFiles(rec)[0]
	wantEntry(closed[len(closed)-1], first, "complete")

	// A second file, open when the server is killed: repaired at the next start.
	c.ts.call("/api/recording/start", map[string]any{"id": rec}, http.StatusOK, nil)
	opened = files.until(30*time.Second, "second file_opened", isType("file_opened"))
	lastSeen := opened[len(opened)-1].ID
	testutil.Eventually(t, 20*time.Second, "2 s recorded in the second file", func() bool {
		fs = c.ts.recordedFiles(rec)
		return len(fs) == 2 && fs[1].Duration >= 2
	})
	second := fs[1]
	files.close()
	c.kill()

	c = startChild(t, addr, data)
	after := c.ts.follow("module=recording&type=file_repaired,file_removed", strconv.FormatInt(lastSeen, 10))
	defer after.close()
	repaired := after.until(10*time.Second, "file_repaired from the history", isType("file_repaired"))
	var again recordedFile
	for _, f := range c.ts.recordedFiles(rec) {
		if f.ID == second.ID {
			again = f
		}
	}
	wantEntry(repaired[len(repaired)-1], again, "repaired")
	if st, err := os.Stat(filepath.Join(data, "recordings", filepath.FromSlash(again.Path))); err != nil || st.Size() != again.Size {
		t.Errorf("repaired file on disk: %v, %v; entry %d bytes", st, err, again.Size)
	}

	// removeFile.
	c.ts.call("/api/recording/removeFile", map[string]any{"record_id": rec, "file_id": first.ID}, http.StatusOK, nil)
	removed := after.until(10*time.Second, "file_removed", isType("file_removed"))
	wantEntry(removed[len(removed)-1], first, "complete")
	if r := removed[len(removed)-1]; r.ID <= repaired[len(repaired)-1].ID || repaired[len(repaired)-1].ID <= lastSeen {
		t.Errorf("event ids across the restart: opened %d, repaired %d, removed %d", lastSeen, repaired[len(repaired)-1].ID, r.ID)
	}
}
