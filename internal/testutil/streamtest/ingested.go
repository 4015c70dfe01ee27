package streamtest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// CheckIngested runs ingest into a new stream (its log discarded), closes the stream, and
// checks what ingest published: a reader opened before reads every unit up to io.EOF (another
// error fails the test), and the units, if any, are normalised (CheckUnits). For fuzz tests of
// an input's ingest path. It returns the units.
func CheckIngested(t testing.TB, ingest func(s *stream.Stream)) []*media.AccessUnit {
	t.Helper()
	s := stream.New("ingested", stream.Options{Log: slog.New(slog.DiscardHandler)})
	r, err := s.NewReader("ingested")
	if err != nil {
		t.Fatal(err)
	}
	ingest(s)
	tracks := s.Tracks()
	s.Close()
	var aus []*media.AccessUnit
	for {
		au, err := r.Read(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		aus = append(aus, au)
	}
	if len(aus) > 0 {
		CheckUnits(t, tracks, aus)
	}
	return aus
}
