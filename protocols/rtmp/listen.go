package rtmp

import (
	"context"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/stream"
)

// listenMaxConnections bounds the connections of a listen input: one publishes, the others
// are refused, and no one plays.
const listenMaxConnections = 16

// Listen is the INPUT_TYPE_RTMP_LISTEN input: an RTMP server on addr that accepts one
// publisher at a time, with any app and key, and publishes into s. When the publisher drops
// it accepts the next; a second publisher while one is live is refused with
// NetStream.Publish.BadName. It returns when ctx ends (nil) or if it cannot listen.
func Listen(ctx context.Context, addr string, s *stream.Stream, log *slog.Logger) error {
	srv := &Server{
		ListenAddr:     addr,
		App:            "*",
		Publish:        func(string) (*stream.Publisher, error) { return s.Publish() },
		Logger:         log,
		MaxConnections: listenMaxConnections,
	}
	return srv.Run(ctx)
}
