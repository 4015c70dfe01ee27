package stream

import (
	"testing"
	"unsafe"
)

// TestReaderLayout: what the Stream touches for a reader on every write (its writer state,
// wake channel and the ring's producer fields) fits the Reader's first two cache lines, the
// consumer's position is on neither, and a Reader is 256 bytes, a size class whose objects
// are aligned to cache lines.
func TestReaderLayout(t *testing.T) {
	var r Reader
	const line = 64
	producerEnd := unsafe.Offsetof(r.ring) + unsafe.Offsetof(r.ring.base) + unsafe.Sizeof(r.ring.base)
	head := unsafe.Offsetof(r.ring) + unsafe.Offsetof(r.ring.head)
	if unsafe.Offsetof(r.w) != 0 || unsafe.Offsetof(r.wake) >= 2*line || producerEnd > 2*line {
		t.Errorf("producer fields end at byte %d, want within the first %d", producerEnd, 2*line)
	}
	if head < 2*line || head/line == (producerEnd-1)/line {
		t.Errorf("consumer position at byte %d shares a line with the producer's fields (end %d)", head, producerEnd)
	}
	if size := unsafe.Sizeof(r); size != 256 {
		t.Errorf("Reader is %d bytes, want 256", size)
	}
}
