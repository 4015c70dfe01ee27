package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The store file holds the token signing secret and the password hashes, so it and SQLite's
// companion files are for the server's user alone.
const (
	// fileMode is the mode of the store file and its -wal and -shm files.
	fileMode fs.FileMode = 0o600
	// dirMode is the mode of the store's folder (the data folder) when the Store creates it.
	dirMode fs.FileMode = 0o700
)

// companions are the suffixes of the files SQLite keeps beside the store in WAL mode.
var companions = []string{"", "-wal", "-shm"}

// preparePrivate creates the store's folder (dirMode) and the store file (fileMode) when they
// are missing, narrows the store and its companions to fileMode when they are wider, and returns
// a warning for each exposure found: a folder other users may enter or list, a file they could
// read.
func preparePrivate(path string) ([]string, error) {
	var warnings []string
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return nil, fmt.Errorf("create folder %s: %w", dir, err)
		}
		// MkdirAll applies the umask; the folder sluice makes is private whatever it is.
		if err := os.Chmod(dir, dirMode); err != nil {
			return nil, fmt.Errorf("folder %s: %w", dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("folder %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a folder", dir)
	case fi.Mode().Perm()&0o007 != 0:
		warnings = append(warnings, fmt.Sprintf("data folder %s is open to other users (mode %04o); "+
			"run chmod 700 on it to keep the store and recordings private", dir, fi.Mode().Perm()))
	}
	for _, suffix := range companions {
		p := path + suffix
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
		}
		if perm := fi.Mode().Perm(); perm&^fileMode != 0 {
			if err := os.Chmod(p, fileMode); err != nil {
				return nil, fmt.Errorf("narrow %s to %04o: %w", p, fileMode, err)
			}
			if perm&0o044 != 0 {
				warnings = append(warnings, fmt.Sprintf("store file %s was readable by other users (mode %04o); "+
					"it is now %04o, but whoever could read it may have the token secret and password hashes: "+
					"change the password with `sluice passwd`", p, perm, fileMode))
			}
		}
	}
	// SQLite creates a missing database file with 0644 less the umask, and its -wal and -shm
	// with the database file's mode: creating the file first makes all three private.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return warnings, nil
}
