package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/writefault"
	"github.com/sluicemedia/sluice/storage"
)

const faultErrnoEnv = "SLUICE_TEST_FAULT_ERRNO"

// TestWritesOnAFullDisk runs the API over a real store in a child process whose file writes
// fail as on a full disk (ENOSPC) and over quota (EDQUOT): every route that writes answers 507
// INSUFFICIENT_STORAGE, and reads still work.
func TestWritesOnAFullDisk(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		t.Run(errno.Error(), func(t *testing.T) {
			writefault.RunChild(t, "TestWritesOnAFullDiskChild", faultErrnoEnv+"="+strconv.Itoa(int(errno)))
		})
	}
}

func TestWritesOnAFullDiskChild(t *testing.T) {
	if !writefault.InChild(t.Name()) {
		return // run by TestWritesOnAFullDisk
	}
	errno, err := strconv.Atoi(os.Getenv(faultErrnoEnv))
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bootstrap(t, st)
	h, err := New(Config{Store: st, Procs: newFakeProcs(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := IssueToken(ctx, st, AdminUser, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h, token: tok}
	vod := e.mustCreate("vod", playerBody("lobby", 8000))
	rec := e.mustCreate("recording", recordingBody("rec"))
	file := storage.RecordedFile{ID: storage.NewID(), RecordID: rec, Name: "a.mp4", Path: "rec/a.mp4", Format: "mp4",
		State: storage.FileComplete, Created: time.Now()}
	if err := st.AddFile(ctx, file); err != nil {
		t.Fatal(err)
	}

	if err := writefault.FailPwrite(syscall.Errno(errno)); err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/api/vod/create", playerBody("hall", 8100)},
		{http.MethodPost, "/api/vod/update", map[string]any{"id": vod, "vod_port": 8200}},
		{http.MethodPost, "/api/vod/stop", map[string]any{"id": vod}},
		{http.MethodPost, "/api/vod/start", map[string]any{"id": vod}},
		{http.MethodDelete, "/api/vod/remove", map[string]any{"id": vod}},
		{http.MethodPost, "/api/recording/removeFile", map[string]any{"record_id": rec, "file_id": file.ID}},
		{http.MethodPost, "/api/auth/logoutAll", nil},
		{http.MethodPost, "/api/auth/logout", nil},
	}
	for _, w := range writes {
		res := e.do(w.method, w.path, w.body)
		wantErr(t, res, http.StatusInsufficientStorage, CodeInsufficientStorage, "")
	}
	if got := names(t, e.post("/api/vod/getAll", nil), "vod_name"); len(got) != 1 || got[0] != "lobby" {
		t.Fatalf("after the refused writes: %v", got)
	}
}
