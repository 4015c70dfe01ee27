package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/stream"
)

// TestHeldPublisher: a held publisher keeps the stream busy before any byte, its first program
// publishes in that same session (no discontinuity), Finish releases the stream for the next
// publisher; Stats counts the garbage the demuxer skipped.
func TestHeldPublisher(t *testing.T) {
	s, r := newStream(t)
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	in := NewHeldPublisher(pub, discard)
	if !in.Publishing() {
		t.Fatal("a held publisher is not publishing")
	}
	if _, err := s.Publish(); !errors.Is(err, stream.ErrBusy) {
		t.Fatalf("second Publish on a held stream: %v, want ErrBusy", err)
	}
	f := NewTSFeed(in)
	junk := []byte(strings.Repeat("junk", 100))
	feedChunks(t, f, junk, len(junk))
	if f.Units() != 0 || s.Tracks() != nil {
		t.Fatalf("garbage published %d units, tracks %v", f.Units(), s.Tracks())
	}
	if st := f.Stats(); st.SkippedBytes < int64(len(junk)) {
		t.Errorf("Stats after %d bytes of garbage: %+v", len(junk), st)
	}
	aus := synthAV(0, 1)
	feedChunks(t, f, muxTS(t, avTracks(), aus), 1316)
	if len(s.Tracks()) != 2 {
		t.Fatalf("tracks %v after a program", s.Tracks())
	}
	f.Finish()
	if in.Publishing() || s.Publishing() {
		t.Error("still publishing after Finish")
	}
	// The stream's next publisher is a second session.
	f = NewTSFeed(NewPublisher(s, discard))
	feedChunks(t, f, muxTS(t, avTracks(), aus), 1316)
	f.Finish()
	if d := s.Discontinuities(); d != 1 {
		t.Errorf("%d discontinuities, want 1: the held session and the next", d)
	}
	got := readAll(s, r)
	if len(got) != 2*len(aus) {
		t.Errorf("reader got %d units, want %d", len(got), 2*len(aus))
	}
	checkMonotonic(t, got[:len(aus)])
}
