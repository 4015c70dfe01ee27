package rtmp

import (
	"context"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/passwd"
)

// Listen input caps: one connection publishes, the others are refused, and no one plays.
const (
	// listenMaxConnections bounds the connections of a listen input (16).
	listenMaxConnections = 16
	// listenMaxPerAddr bounds the connections of a listen input from one address (4): the
	// publisher, its reconnection while the old connection times out, and a probe.
	listenMaxPerAddr = 4
)

// Listen is the INPUT_TYPE_RTMP_LISTEN input: an RTMP server on o.Addr that accepts one
// publisher at a time, with any app and key, and publishes into s. With o.Password the
// publisher must give it (as to a Server's PublishPassword), checked before whether another
// publisher is live. When the publisher drops it accepts the next; a second publisher while
// one is live is refused with NetStream.Publish.BadName. It returns when ctx ends (nil) or if
// it cannot listen.
func Listen(ctx context.Context, s *stream.Stream, o ListenOptions) error {
	srv := &Server{
		ListenAddr:            o.Addr,
		App:                   "*",
		Publish:               func(string) (*stream.Publisher, error) { return s.Publish() },
		PublishPassword:       o.Password,
		Log:                   o.Log,
		MaxConnections:        listenMaxConnections,
		MaxConnectionsPerAddr: listenMaxPerAddr,
	}
	return srv.Run(ctx)
}

// ListenPassword reads the password an INPUT_TYPE_RTMP_LISTEN input's address sets: the
// password parameter (PasswordParam) of its query, rtmp://0.0.0.0:1935/live/cam?password=S (or
// .../live?password=S); given is false when the address has none. The address's host, port,
// app and key are not read. Errors never show the address, which holds the password.
func ListenPassword(raw string) (password string, given bool, err error) {
	return passwd.FromAddress(raw)
}
