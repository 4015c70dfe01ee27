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

// Options tune Listen and Pull. The zero value uses the defaults.
type Options struct {
	// Host is the local IP address Listen binds; default empty, every local address. Pull
	// binds what its URL says.
	Host string
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

// SendOptions tune Send and SendRTP. The zero value uses the defaults.
type SendOptions struct {
	// Log receives connection and track changes; default slog.Default().
	Log *slog.Logger
}

func (o SendOptions) withDefaults() SendOptions {
	opt.Zero(&o.Log, slog.Default())
	return o
}
