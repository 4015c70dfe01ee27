package srt

import (
	"fmt"
	"time"

	gosrt "github.com/datarhei/gosrt"
)

// Defaults and limits of Options.
const (
	// DefaultLatency is the SRT latency of the server module and of URLs without latency=.
	DefaultLatency = 200 * time.Millisecond
	// DefaultPeerIdleTimeout closes a connection whose peer sent nothing, not even a
	// keepalive, for this long.
	DefaultPeerIdleTimeout = 5 * time.Second
	// DefaultConnectTimeout bounds a caller's handshake.
	DefaultConnectTimeout = 3 * time.Second
	// MaxLatency is the largest latency accepted; larger values are almost always ffmpeg's
	// microseconds given where milliseconds are expected.
	MaxLatency = 60 * time.Second

	minPassphrase = 10
	maxPassphrase = 79
)

// payloadSize is the SRT payload of the media we send: 7 TS packets, what every SRT receiver
// (libsrt, ffmpeg) expects in live mode.
const payloadSize = 7 * 188

// Options are the SRT settings of a listener or a caller. The zero value uses the defaults.
type Options struct {
	// Latency is the SRT receive and peer latency (TSBPD delay). Default 200 ms; at most 60 s.
	Latency time.Duration
	// Passphrase enables AES encryption: 10 to 79 characters, or empty for none. A listener
	// with a passphrase refuses callers without one, and the reverse.
	Passphrase string
	// PBKeyLen is the AES key length in bytes a caller asks for: 16, 24 or 32. Default 16. A
	// listener takes the caller's key length.
	PBKeyLen int
	// MaxBW caps what a connection sends, in bytes per second of SRT payload; 0 or -1 means
	// unlimited. sluice paces its own writes: gosrt's sender ignores the setting.
	MaxBW int64
	// PeerIdleTimeout closes a connection whose peer sent nothing for this long.
	// Default 5 s.
	PeerIdleTimeout time.Duration
	// ConnectTimeout bounds a caller's handshake. Default 3 s.
	ConnectTimeout time.Duration
	// StreamID is the stream id a caller sends; listeners ignore it.
	StreamID string
}

// Validate checks the options' ranges.
func (o Options) Validate() error {
	if o.Latency < 0 || o.Latency > MaxLatency {
		return fmt.Errorf("latency %v: want 0 to %v (SRT latency is in milliseconds): %w", o.Latency, MaxLatency, ErrInvalidURL)
	}
	if n := len(o.Passphrase); n != 0 && (n < minPassphrase || n > maxPassphrase) {
		return fmt.Errorf("passphrase of %d characters: want %d to %d: %w", n, minPassphrase, maxPassphrase, ErrInvalidURL)
	}
	switch o.PBKeyLen {
	case 0, 16, 24, 32:
	default:
		return fmt.Errorf("pbkeylen %d: want 16, 24 or 32: %w", o.PBKeyLen, ErrInvalidURL)
	}
	if o.MaxBW < -1 {
		return fmt.Errorf("maxbw %d: want -1 (unlimited) or more: %w", o.MaxBW, ErrInvalidURL)
	}
	if o.PeerIdleTimeout < 0 || o.ConnectTimeout < 0 {
		return fmt.Errorf("negative timeout: %w", ErrInvalidURL)
	}
	if len(o.StreamID) > maxStreamIDLen {
		return fmt.Errorf("stream id of %d bytes, over %d: %w", len(o.StreamID), maxStreamIDLen, ErrInvalidURL)
	}
	return nil
}

// config returns the gosrt configuration for o.
func (o Options) config() (gosrt.Config, error) {
	if err := o.Validate(); err != nil {
		return gosrt.Config{}, err
	}
	c := gosrt.DefaultConfig()
	c.Latency = o.Latency
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	}
	c.Passphrase = o.Passphrase
	if o.PBKeyLen != 0 {
		c.PBKeylen = o.PBKeyLen
	}
	c.MaxBW = o.MaxBW
	if c.MaxBW == 0 {
		c.MaxBW = -1
	}
	c.PeerIdleTimeout = o.PeerIdleTimeout
	if c.PeerIdleTimeout == 0 {
		c.PeerIdleTimeout = DefaultPeerIdleTimeout
	}
	c.ConnectionTimeout = o.ConnectTimeout
	if c.ConnectionTimeout == 0 {
		c.ConnectionTimeout = DefaultConnectTimeout
	}
	c.StreamId = o.StreamID
	c.PayloadSize = payloadSize
	if err := c.Validate(); err != nil {
		return gosrt.Config{}, fmt.Errorf("srt options: %w", err)
	}
	return c, nil
}
