package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSQLiteFullIsNoSpace: SQLITE_FULL, here from a page limit on the writer connection, is a
// *NoSpaceError whatever else the diagnosis finds (the folder itself has room).
func TestSQLiteFullIsNoSpace(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.w.ExecContext(ctx, `PRAGMA max_page_count = 1`); err != nil {
		t.Fatal(err)
	}
	err = s.SetSetting(ctx, "k", strings.Repeat("v", 64<<10))
	var ns *NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, ErrNoSpace) || ns.Errno != syscall.ENOSPC || ns.Path != s.path {
		t.Fatalf("write over the page limit: %v (%#v)", err, ns)
	}
	if !strings.Contains(err.Error(), "sluice.db") || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("message %q names neither the file nor the cause", err)
	}
}

// TestSpaceErrnoOfARealWrite reads the errno of a real failed write: /dev/full answers ENOSPC.
func TestSpaceErrnoOfARealWrite(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Write([]byte("x"))
	if got := spaceErrno(err); got != syscall.ENOSPC {
		t.Fatalf("spaceErrno(%v) = %v, want ENOSPC", err, got)
	}
	if got := spaceErrno(os.ErrPermission); got != 0 {
		t.Fatalf("spaceErrno(permission) = %v, want 0", got)
	}
	if got := probeWrite(t.TempDir()); got != 0 {
		t.Fatalf("probe in a folder with room: %v", got)
	}
}
