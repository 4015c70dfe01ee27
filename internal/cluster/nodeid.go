package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// IDFile is the name of the file, in the server's data folder, that keeps a node's default id
// across restarts (KeptID).
const IDFile = "node-id"

// newID is a default node id: the host name and a random suffix.
func newID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "node"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := host + "-" + hex.EncodeToString(b[:])
	if len(id) > maxIDLen {
		id = id[len(id)-maxIDLen:]
	}
	return id
}

// KeptID is the node id kept in dir/IDFile. The first call on a folder makes one (the host
// name and a random suffix) and writes it there (0600; the folder, when made, 0700); later
// calls, a restarted server's, read it back. So a node without a configured id keeps its id
// across restarts, and with it its leases, its recorded files and their queued removals. made
// says this call made the id. Servers starting at once on one folder get the same id (the
// file is created exclusively). White space around the id is passed over; a file that does
// not hold one line of 1 to 100 bytes of printable UTF-8 is an error, not replaced: it may be
// an operator's edit.
func KeptID(dir string) (id string, made bool, err error) {
	path := filepath.Join(dir, IDFile)
	if id, err := readID(path); !errors.Is(err, fs.ErrNotExist) {
		return id, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("node id: %w", err)
	}
	id = newID()
	// Written whole to a temporary file, then linked in place: the name never holds a part
	// of an id, and a link, unlike a rename, fails when another server made the file first.
	tmp, err := os.CreateTemp(dir, "."+IDFile+"-*")
	if err != nil {
		return "", false, fmt.Errorf("node id: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(id + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("node id: write %s: %w", tmp.Name(), err)
	}
	switch err := os.Link(tmp.Name(), path); {
	case errors.Is(err, fs.ErrExist):
		id, err := readID(path)
		return id, false, err
	case err != nil:
		return "", false, fmt.Errorf("node id: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // the new name survives a power loss
		_ = d.Sync()
		d.Close()
	}
	return id, true, nil
}

// readID reads and checks the id kept in the file at path.
func readID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIDLen+2))
	if err != nil {
		return "", fmt.Errorf("node id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	bad := ""
	switch {
	case len(id) == 0:
		bad = "empty"
	case len(id) > maxIDLen:
		bad = fmt.Sprintf("over %d bytes", maxIDLen)
	case strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || r == unicode.ReplacementChar }) >= 0:
		bad = "not one line of printable characters"
	}
	if bad != "" {
		return "", fmt.Errorf("node id file %s: %s; correct it, remove it (a new id is made) or set the node id", path, bad)
	}
	return id, nil
}
