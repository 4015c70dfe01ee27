package udp

import (
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Defaults of Options.
const (
	DefaultIdleTimeout = 2 * time.Second
	DefaultReadBuffer  = 4 << 20
)

// Options configure Listen and Pull.
type Options struct {
	// Addr is where Listen binds: host:port as net.ListenPacket takes it; an empty host is
	// every local address, port 0 any free port. Required by Listen: an empty Addr fails.
	Addr string
	// URL is what Pull receives (udp://…, see Pull); it binds what the URL says.
	URL string
	// IdleTimeout ends a publisher session after this long without a valid datagram; the next
	// datagram starts a new session (a discontinuity for readers). Default 2 s.
	IdleTimeout time.Duration
	// ReadBuffer is the socket receive buffer asked for, in bytes; the kernel may grant less
	// (net.core.rmem_max) unless the server has CAP_NET_ADMIN. Default 4 MiB. A URL's
	// buffer_size or fifo_size overrides it.
	ReadBuffer int
	// Log receives session starts and ends; default slog.Default().
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	opt.Positive(&o.IdleTimeout, DefaultIdleTimeout)
	opt.Positive(&o.ReadBuffer, DefaultReadBuffer)
	opt.Zero(&o.Log, slog.Default())
	return o
}

// SendOptions configure Send and SendRTP.
type SendOptions struct {
	// URL is where to send: udp://host:port or rtp://host:port, with the options Send lists.
	URL string
	// Log receives connection and track changes; default slog.Default().
	Log *slog.Logger
}

func (o SendOptions) withDefaults() SendOptions {
	opt.Zero(&o.Log, slog.Default())
	return o
}
