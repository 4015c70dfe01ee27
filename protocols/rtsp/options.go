package rtsp

import "log/slog"

// PullOptions configure Pull.
type PullOptions struct {
	// URL is the stream: rtsp://[user:pass@]host[:port]/path, with the query option
	// rtsp_transport=tcp|udp (not sent to the server).
	URL string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
}

// PushOptions configure Push.
type PushOptions struct {
	// URL is where to publish: rtsp://[user:pass@]host[:port]/path.
	URL string
	// Log gets the output's messages. Default: slog.Default().
	Log *slog.Logger
}
