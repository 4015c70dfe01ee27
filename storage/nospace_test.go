package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/writefault"
	"github.com/sluicemedia/sluice/storage"
)

// faultDBEnv passes the store path to a child test.
const faultDBEnv = "SLUICE_TEST_FAULT_DB"

// inFaultChild tells whether this run of t is the child that checks a write fault; if not,
// it runs that child, with a new store path in faultDBEnv, and reports its result.
func inFaultChild(t *testing.T) bool {
	if writefault.InChild(t.Name()) {
		return true
	}
	writefault.RunChild(t, t.Name(), faultDBEnv+"="+filepath.Join(t.TempDir(), "sluice.db"))
	return false
}

// writesUnder opens a store with one player, makes every later pwrite of the process fail with
// errno, and returns the error of each kind of write the API makes.
func writesUnder(t *testing.T, errno syscall.Errno) map[string]error {
	t.Helper()
	s, err := storage.Open(os.Getenv(faultDBEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := player("lobby", 8000)
	if err := s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := writefault.FailPwrite(errno); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10) // more than the page cache holds back: it reaches the WAL
	q := player("second", 8100)
	q.Input.InputStreamID = big
	p.VodPort = 8200
	p.Input.InputStreamID = big
	return map[string]error{
		"create":    s.Create(ctx, q),
		"update":    s.Update(ctx, p),
		"setActive": s.SetActive(ctx, storage.ModuleVOD, p.ID, true, at(0)),
		"delete":    s.Delete(ctx, storage.ModuleVOD, p.ID),
		"setting":   s.SetSetting(ctx, "tokens_not_before/x", big),
		"revoke":    s.RevokeToken(ctx, big, at(0)),
	}
}

func TestNoSpaceENOSPCChild(t *testing.T) {
	checkNoSpace(t, syscall.ENOSPC, "ENOSPC", "on a full disk")
}

func TestNoSpaceEDQUOTChild(t *testing.T) {
	checkNoSpace(t, syscall.EDQUOT, "EDQUOT", "over quota")
}

// checkNoSpace checks, in the fault child, that every kind of write failing with errno (name;
// where says when) is ErrNoSpace and still errno.
func checkNoSpace(t *testing.T, errno syscall.Errno, name, where string) {
	if !inFaultChild(t) {
		return
	}
	for op, err := range writesUnder(t, errno) {
		if !errors.Is(err, storage.ErrNoSpace) || !errors.Is(err, errno) {
			t.Errorf("%s %s: %v, want ErrNoSpace and %s", op, where, err, name)
		}
	}
}

// TestEIOIsNotNoSpaceChild: a failing device is an I/O error, not a full disk.
func TestEIOIsNotNoSpaceChild(t *testing.T) {
	if !inFaultChild(t) {
		return
	}
	for op, err := range writesUnder(t, syscall.EIO) {
		if err == nil || errors.Is(err, storage.ErrNoSpace) {
			t.Errorf("%s on a failing device: %v, want an error that is not ErrNoSpace", op, err)
		}
	}
}

// TestNoSpaceFileSizeLimitChild: the process's file-size limit (RLIMIT_FSIZE, EFBIG), as the
// recording tests use for a full disk, reached by the store's WAL.
func TestNoSpaceFileSizeLimitChild(t *testing.T) {
	if !inFaultChild(t) {
		return
	}
	path := os.Getenv(faultDBEnv)
	s, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	var largest int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	limit := uint64(largest) + 256<<10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("y", 32<<10)
	for i := range 100 {
		err = s.SetSetting(ctx, "big"+strings.Repeat("k", i), big)
		if err != nil {
			break
		}
	}
	if !errors.Is(err, storage.ErrNoSpace) || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("write past the file-size limit: %v, want ErrNoSpace and EFBIG", err)
	}
	t.Logf("refused: %v", err)
}
