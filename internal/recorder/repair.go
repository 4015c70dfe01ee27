package recorder

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicemedia/sluice/packager/record"
)

// Repair repairs a file a crash left being written (e, under the recordings folder dir): it is
// cut back to its last whole fragment and gets its index. The entry returned is e with its new
// size, duration and end, in StateRepaired; the caller saves it.
func Repair(dir string, e Entry, log *slog.Logger) Entry {
	e.State = StateRepaired
	path := filepath.Join(dir, filepath.Clean("/"+e.Path))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		log.Warn("recorded file left open by a crash is gone", "file", e.Path)
		e.Size, e.Duration = 0, 0
	case err != nil:
		log.Error("recorded file left open by a crash cannot be opened", "file", e.Path, "error", err)
	default:
		d, err := record.Repair(e.Format, f)
		if err != nil {
			log.Warn("recorded file left open by a crash has nothing to keep", "file", e.Path, "error", err)
		}
		e.Duration = d.Seconds()
		if fi, err := f.Stat(); err == nil {
			e.Size = fi.Size()
			mt := fi.ModTime().UTC()
			e.Ended = &mt
		}
		if err := f.Sync(); err != nil {
			log.Warn("recorded file: sync after repair", "file", e.Path, "error", err)
		}
		f.Close()
		log.Info("recorded file repaired after a crash", "file", e.Path, "seconds", e.Duration, "bytes", e.Size)
	}
	if e.Ended == nil {
		now := time.Now().UTC()
		e.Ended = &now
	}
	return e
}
