package srt

import "log/slog"

// ListenOptions configure NewListener.
type ListenOptions struct {
	// Addr is where to listen: host:port as net.ListenPacket takes it; an empty host is every
	// local address.
	Addr string
	// Options are the SRT settings (ParseListenURL reads them from an input's URL).
	Options Options
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
	// Probe, when set, reports the publisher's link.
	Probe *Probe
}

// PullOptions configure Pull.
type PullOptions struct {
	// URL is the stream: srt://host:port?streamid=…&latency=… (see ParseURL).
	URL string
	// Log gets the input's messages. Default: slog.Default().
	Log *slog.Logger
	// Probe, when set, reports the link.
	Probe *Probe
}

// SendOptions configure Send.
type SendOptions struct {
	// URL is where to send: srt://host:port?… (see ParseURL); mode=listener waits for one
	// caller there instead.
	URL string
	// Log gets the output's messages. Default: slog.Default().
	Log *slog.Logger
	// Probe, when set, reports the link.
	Probe *Probe
}
