package rtmp

import "log/slog"

// ListenOptions configure Listen.
type ListenOptions struct {
	// Addr is where to listen: host:port as net.Listen takes it; an empty host is every
	// interface.
	Addr string
	// Password, when set, is the secret a publisher gives as the password parameter
	// (PasswordParam) of its stream key's query, or of its app's when the key has none, as to
	// a Server's PublishPassword. Default: anyone who reaches Addr may publish.
	Password string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// PullOptions configure Pull.
type PullOptions struct {
	// URL is the stream to play: rtmp://host[:port]/app/key, or rtmps:// (TLS, port 443).
	URL string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// PushOptions configure Push.
type PushOptions struct {
	// URL is the server and app to publish to, rtmp://host[:port]/app (rtmps://: TLS, port
	// 443); with an empty Key it carries the key too (rtmp://host/app/key).
	URL string
	// Key is the stream key.
	Key string
	// Log gets the output's messages. Default: slog.Default().
	Log *slog.Logger
}
