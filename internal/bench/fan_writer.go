package bench

import (
	"errors"
	"fmt"
	"io"
)

// fanWriter writes each chunk to every writer still healthy: the pacer's one schedule feeding
// many listeners. A writer that fails is left out from then on; Write fails only when none is
// left.
type fanWriter struct {
	ws     []io.Writer
	failed []bool
	err    error // the first failure
}

// add appends a writer.
func (f *fanWriter) add(w io.Writer) {
	f.ws = append(f.ws, w)
	f.failed = append(f.failed, false)
}

// Write writes b to every healthy writer.
func (f *fanWriter) Write(b []byte) (int, error) {
	ok := 0
	for i, w := range f.ws {
		if f.failed[i] {
			continue
		}
		if _, err := w.Write(b); err != nil {
			f.failed[i] = true
			if f.err == nil {
				f.err = fmt.Errorf("write to listener %d of %d: %w", i+1, len(f.ws), err)
			}
			continue
		}
		ok++
	}
	if ok == 0 {
		if f.err == nil {
			f.err = errors.New("no listener to write to")
		}
		return 0, f.err
	}
	return len(b), nil
}

// Err is the first failure of a writer, nil when every one took every chunk.
func (f *fanWriter) Err() error { return f.err }
