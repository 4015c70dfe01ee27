package ingest

import (
	"log/slog"

	"github.com/sluicemedia/sluice/internal/stream"
)

// NewHeldPublisher returns a Publisher whose first session is pub, a stream publisher the
// caller attached already to hold the stream before the tracks are known (an SRT server
// refuses a busy stream name at the handshake). Publishing reports true from now on; the first
// SetTracks sets the tracks on pub, and later sessions attach anew, as with NewPublisher.
func NewHeldPublisher(pub *stream.Publisher, log *slog.Logger) *Publisher {
	return &Publisher{s: pub.Stream(), log: log, pub: pub}
}
