package mpegts

import (
	"bytes"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// muxAll writes units with a new Muxer and returns the stream.
func muxAll(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) []byte {
	t.Helper()
	var buf bytes.Buffer
	m, err := NewMuxer(&buf, tracks)
	if err != nil {
		t.Fatalf("NewMuxer: %v", err)
	}
	for _, au := range aus {
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatalf("WriteAccessUnit: %v", err)
		}
	}
	return buf.Bytes()
}
