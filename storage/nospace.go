package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	sqlite3 "modernc.org/sqlite/lib"
)

// spaceProbeBytes is what the diagnosis of a failed write tries to write beside the store: more
// than a WAL frame (a 4 KiB page and its 24-byte header).
const spaceProbeBytes = 8 << 10

// NoSpaceError is a write the store could not make for lack of space. errors.Is matches it with
// ErrNoSpace and with its Errno (syscall.ENOSPC, EDQUOT or EFBIG).
type NoSpaceError struct {
	// Path is the store file.
	Path string
	// Errno says which limit was hit: ENOSPC (file system full), EDQUOT (quota), EFBIG (file-size limit).
	Errno syscall.Errno
	// Err is SQLite's error.
	Err error
}

// Error says what ran out and where.
func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("storage: write %s: %v: %v", e.Path, e.Errno, e.Err)
}

// Is matches ErrNoSpace and the Errno.
func (e *NoSpaceError) Is(target error) bool {
	return target == ErrNoSpace || (e.Errno != 0 && target == e.Errno)
}

// Unwrap returns SQLite's error.
func (e *NoSpaceError) Unwrap() error { return e.Err }

// noSpace returns err as a *NoSpaceError when it is a write that failed for lack of space, and
// err unchanged otherwise. SQLite answers SQLITE_FULL for ENOSPC and short writes, and
// SQLITE_IOERR_* without the errno for every other failed write (EDQUOT, EFBIG, EIO alike), so
// for those the cause is found again: the process's file-size limit against the store's files,
// then a small write beside the store.
func (s *Store) noSpace(err error) error {
	if err == nil || errors.Is(err, ErrNoSpace) {
		return err
	}
	var errno syscall.Errno
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_FULL:
		if errno = s.diagnoseSpace(); errno == 0 {
			errno = syscall.ENOSPC
		}
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		if errno = s.diagnoseSpace(); errno == 0 {
			return err
		}
	default:
		return err
	}
	return &NoSpaceError{Path: s.path, Errno: errno, Err: err}
}

// diagnoseSpace finds why a write beside the store would fail now: EFBIG when a store file is
// within spaceProbeBytes of the file-size limit, else the errno of a probe write in the store's
// folder (ENOSPC, EDQUOT), else 0.
func (s *Store) diagnoseSpace() syscall.Errno {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim) == nil && lim.Cur != ^uint64(0) {
		for _, suffix := range companions {
			if fi, err := os.Stat(s.path + suffix); err == nil && uint64(fi.Size())+spaceProbeBytes > lim.Cur {
				return syscall.EFBIG
			}
		}
	}
	return probeWrite(filepath.Dir(s.path))
}

// probeWrite writes spaceProbeBytes to a new file in dir, syncs and removes it, and returns the
// errno that says space ran out, or 0.
func probeWrite(dir string) syscall.Errno {
	f, err := os.CreateTemp(dir, ".sluice-space-probe-*")
	if err != nil {
		return spaceErrno(err)
	}
	defer os.Remove(f.Name())
	// pwrite(2), the call SQLite writes its files with.
	_, err = f.WriteAt(make([]byte, spaceProbeBytes), 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return spaceErrno(err)
}

// spaceErrno is the errno of err when it says space ran out (ENOSPC, EDQUOT, EFBIG), else 0.
func spaceErrno(err error) syscall.Errno {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if errors.Is(err, e) {
			return e
		}
	}
	return 0
}
