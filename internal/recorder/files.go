package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// createFile makes a new file for a session of recording name that started at start:
// <dir>/<name>/<name>_<UTC start>.<ext>, with the name sanitised so that nothing can leave dir.
// rel is the file's path relative to dir.
func createFile(dir, name string, start time.Time, ext string) (rel string, f *os.File, err error) {
	base := safeName(name)
	folder := filepath.Join(dir, base)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", nil, fmt.Errorf("recordings folder: %w", err)
	}
	stamp := start.UTC().Format("20060102T150405.000Z")
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s_%s.%s", base, stamp, ext)
		if i > 0 {
			name = fmt.Sprintf("%s_%s-%d.%s", base, stamp, i, ext)
		}
		f, err = os.OpenFile(filepath.Join(folder, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("create recorded file: %w", err)
		}
		return base + "/" + name, f, nil
	}
}

// safeName turns a recording name into a folder and file name: letters, digits, '-', '_' and
// '.' are kept, anything else becomes '_'; no leading dot; at most 100 bytes.
func safeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		return "recording"
	}
	return s
}

// ErrOutside is wrapped when a recorded file's path would leave the recordings folder.
var ErrOutside = errors.New("path escapes the recordings folder")

// confine is the path of the recorded file rel (relative to dir, as the store keeps it),
// refused when it would leave dir.
func confine(dir, rel string) (string, error) {
	p := filepath.Join(dir, filepath.Clean("/"+rel))
	if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
		return "", fmt.Errorf("%q: %w", rel, ErrOutside)
	}
	return p, nil
}

// OpenFile opens the recorded file rel of the recordings folder dir, with its modification
// time. A missing file wraps fs.ErrNotExist.
func OpenFile(dir, rel string) (*os.File, time.Time, error) {
	p, err := confine(dir, rel)
	if err != nil {
		return nil, time.Time{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("recorded file %s: %w", rel, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, time.Time{}, fmt.Errorf("recorded file %s: %w", rel, err)
	}
	return f, st.ModTime(), nil
}

// RemoveFile deletes the recorded file rel of the recordings folder dir; a file already gone
// is not an error.
func RemoveFile(dir, rel string) error {
	p, err := confine(dir, rel)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}
