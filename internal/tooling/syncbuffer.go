package tooling

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: the sink of a child's output that one
// goroutine writes while another reads it. Max, when above zero, caps what it keeps (in bytes):
// once the buffer holds more than Max, further writes are dropped (and reported as written), so
// a chatty child cannot fill the memory. The zero value keeps everything.
type SyncBuffer struct {
	Max int
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, unless the buffer already holds more than Max.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Max > 0 && b.buf.Len() > b.Max {
		return len(p), nil
	}
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
