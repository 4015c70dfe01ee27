package link

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Defaults and limits of Config.
const (
	// DefaultLatency is libsrt's receive latency (SRTO_LATENCY) in live mode.
	DefaultLatency = 120 * time.Millisecond
	// MaxLatency is the largest latency the handshake carries: 16 bits of milliseconds.
	MaxLatency = 65535 * time.Millisecond
	// DefaultPeerIdleTimeout closes a connection whose peer sent nothing for this long
	// (SRTO_PEERIDLETIMEO).
	DefaultPeerIdleTimeout = 5 * time.Second
	// DefaultConnectTimeout bounds a caller's handshake (SRTO_CONNTIMEO).
	DefaultConnectTimeout = 3 * time.Second
	// DefaultPayloadSize is live mode's payload: 7 MPEG-TS packets (SRTO_PAYLOADSIZE).
	DefaultPayloadSize = 1316
	// MaxPayloadSize is the largest payload of a 1500-byte MSS.
	MaxPayloadSize = wire.MaxPayload
	// DefaultMaxConns bounds a listener's concurrent connections.
	DefaultMaxConns = 1000
	// DefaultBufferRate is the bitrate the default buffers are sized for, bits per second:
	// a high contribution bitrate, 50 Mbit/s.
	DefaultBufferRate = 50_000_000
	// MaxBuffer caps RecvBuffer and SendBuffer, bytes (64 MiB).
	MaxBuffer = 64 << 20
	// minBufferPackets is the smallest buffer, in packets, whatever the configuration says.
	minBufferPackets = 32
	// minPassphrase and maxPassphrase bound a passphrase's length (SRTO_PASSPHRASE).
	minPassphrase = 10
	maxPassphrase = 79
)

// Config holds the settings of a listener or a caller. The zero value takes the defaults.
type Config struct {
	// Latency is the receive latency (TSBPD delay) and the latency asked of the peer for what
	// we send; each direction uses the larger of both sides' wishes. Default 120 ms (libsrt's;
	// sluice passes 200 ms); at most 65535 ms.
	Latency time.Duration
	// PeerIdleTimeout closes a connection whose peer sent nothing for this long. Default 5 s.
	PeerIdleTimeout time.Duration
	// ConnectTimeout bounds a caller's or rendezvous handshake. Default 3 s.
	ConnectTimeout time.Duration
	// Passphrase enables AES encryption: 10 to 79 characters, or empty for none. A listener
	// with one refuses callers without one, and the reverse (libsrt's enforced encryption).
	Passphrase string
	// PBKeyLen is the AES key length in bytes a caller uses: 16, 24 or 32; 0 takes what the
	// listener advertises, else 16. A listener takes the caller's. A rendezvous side advertises
	// it; the initiator uses the responder's advertised length, else its own, else 16.
	PBKeyLen int
	// StreamID is what a caller (or a rendezvous initiator) sends in the stream id extension,
	// at most 512 bytes.
	StreamID string
	// PayloadSize is the largest message Write takes, bytes. Default 1316, at most 1456.
	PayloadSize int
	// MaxBW caps what a connection sends, bytes per second of payload and headers. 0 paces
	// at the measured input rate plus 25 % (libsrt's live default); -1 is unlimited.
	MaxBW int64
	// RecvBuffer caps the receive buffer, bytes of payload. Default: 50 Mbit/s for the
	// latency plus 500 ms; at most 64 MiB.
	RecvBuffer int
	// SendBuffer caps the send buffer, bytes of payload. Default: 50 Mbit/s for the sender's
	// drop delay (the larger of latency and 1 s) plus 500 ms; at most 64 MiB.
	SendBuffer int
	// KMRefreshRate is how many packets one key encrypts before the sender switches to a new
	// one (SRTO_KMREFRESHRATE). Default 2^24.
	KMRefreshRate uint32
	// KMPreAnnounce is how many packets before the switch the next key is announced, and
	// after it the old one retired (SRTO_KMPREANNOUNCE). Default 2^12, at most
	// (KMRefreshRate-1)/2.
	KMPreAnnounce uint32
	// MaxConns bounds a listener's concurrent connections. Default 1000.
	MaxConns int
	// Log receives connection events (never one per packet). Default slog.Default().
	Log *slog.Logger
}

// resolved is a Config with its defaults applied and its sizes in packets.
type resolved struct {
	Config
	rcvPkts int // receive buffer capacity, packets
	sndPkts int // send buffer capacity, packets
}

func (c Config) resolve() (resolved, error) {
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	}
	if c.Latency < 0 || c.Latency > MaxLatency {
		return resolved{}, fmt.Errorf("latency %v: want 0 to %v: %w", c.Latency, MaxLatency, ErrConfig)
	}
	if c.PeerIdleTimeout == 0 {
		c.PeerIdleTimeout = DefaultPeerIdleTimeout
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.PeerIdleTimeout < 0 || c.ConnectTimeout < 0 {
		return resolved{}, fmt.Errorf("negative timeout: %w", ErrConfig)
	}
	if n := len(c.Passphrase); n != 0 && (n < minPassphrase || n > maxPassphrase) {
		return resolved{}, fmt.Errorf("passphrase of %d characters: want %d to %d: %w", n, minPassphrase, maxPassphrase, ErrConfig)
	}
	switch c.PBKeyLen {
	case 0, 16, 24, 32:
	default:
		return resolved{}, fmt.Errorf("pbkeylen %d: want 16, 24 or 32: %w", c.PBKeyLen, ErrConfig)
	}
	if len(c.StreamID) > wire.MaxStreamID {
		return resolved{}, fmt.Errorf("stream id of %d bytes over %d: %w", len(c.StreamID), wire.MaxStreamID, ErrConfig)
	}
	if c.PayloadSize == 0 {
		c.PayloadSize = DefaultPayloadSize
	}
	if c.PayloadSize < 0 || c.PayloadSize > MaxPayloadSize {
		return resolved{}, fmt.Errorf("payload size %d: want 1 to %d: %w", c.PayloadSize, MaxPayloadSize, ErrConfig)
	}
	if rate, pre := cmp.Or(c.KMRefreshRate, crypt.DefaultRefreshRate), c.KMPreAnnounce; pre > (rate-1)/2 {
		return resolved{}, fmt.Errorf("kmpreannounce %d over (kmrefreshrate-1)/2 = %d: %w", pre, (rate-1)/2, ErrConfig)
	}
	if c.MaxBW < -1 {
		return resolved{}, fmt.Errorf("maxbw %d: want -1 (unlimited), 0 (input rate) or bytes/s: %w", c.MaxBW, ErrConfig)
	}
	rate := int64(DefaultBufferRate / 8)
	if c.RecvBuffer == 0 {
		c.RecvBuffer = int(rate * int64(c.Latency+500*time.Millisecond) / int64(time.Second))
	}
	if c.SendBuffer == 0 {
		c.SendBuffer = int(rate * int64(max(c.Latency, time.Second)+500*time.Millisecond) / int64(time.Second))
	}
	if c.RecvBuffer < 0 || c.SendBuffer < 0 {
		return resolved{}, fmt.Errorf("negative buffer size: %w", ErrConfig)
	}
	c.RecvBuffer = min(c.RecvBuffer, MaxBuffer)
	c.SendBuffer = min(c.SendBuffer, MaxBuffer)
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxConns < 0 {
		return resolved{}, fmt.Errorf("max conns %d: %w", c.MaxConns, ErrConfig)
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return resolved{
		Config:  c,
		rcvPkts: max(c.RecvBuffer/c.PayloadSize, minBufferPackets),
		sndPkts: max(c.SendBuffer/c.PayloadSize, minBufferPackets),
	}, nil
}

// Validate reports whether Listen and Dial would accept c.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}
