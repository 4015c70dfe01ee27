package mpegts

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// newMuxer returns a Muxer of tracks that writes to w, failing the test when NewMuxer refuses
// the tracks.
func newMuxer(t testing.TB, w io.Writer, tracks []media.Track) *Muxer {
	t.Helper()
	m, err := NewMuxer(w, tracks)
	if err != nil {
		t.Fatalf("NewMuxer: %v", err)
	}
	return m
}

// muxAll writes units with a new Muxer and returns the stream.
func muxAll(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) []byte {
	t.Helper()
	var buf bytes.Buffer
	m := newMuxer(t, &buf, tracks)
	for _, au := range aus {
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatalf("WriteAccessUnit: %v", err)
		}
	}
	return buf.Bytes()
}

// readUntil returns the units d gives until Read returns an error that is end; any other error
// fails the test.
func readUntil(t *testing.T, d *Demuxer, end error) []*media.AccessUnit {
	t.Helper()
	var out []*media.AccessUnit
	for {
		au, err := d.Read()
		if errors.Is(err, end) {
			return out
		}
		if err != nil {
			t.Fatalf("Read after %d units: %v, want %v", len(out), err, end)
		}
		out = append(out, au)
	}
}
