package srt

import (
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/link"
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
	// DefaultRendezvousTimeout bounds a rendezvous handshake: ten times a caller's, as libsrt
	// gives it, since both sides have to be started within it.
	DefaultRendezvousTimeout = 10 * DefaultConnectTimeout
	// MaxLatency is the largest latency accepted; larger values are almost always ffmpeg's
	// microseconds given where milliseconds are expected.
	MaxLatency = 60 * time.Second
	// MaxTimeout bounds the peer idle and connect timeouts, for the same reason.
	MaxTimeout = 5 * time.Minute

	minPassphrase = 10
	maxPassphrase = 79
)

// payloadSize is the SRT payload of the media we send: 7 TS packets, what every SRT receiver
// (libsrt, ffmpeg) expects in live mode.
const payloadSize = 7 * 188

// Options are the SRT settings of a listener or a caller. The zero value uses the defaults.
type Options struct {
	// Latency is the SRT receive and peer latency (TSBPD delay); each direction uses the
	// larger of both sides' wishes. Default 200 ms; at most 60 s.
	Latency time.Duration
	// Passphrase enables AES encryption: 10 to 79 characters, or empty for none. A listener
	// with a passphrase refuses callers without one, and the reverse.
	Passphrase string
	// PBKeyLen is the AES key length in bytes a caller asks for: 16, 24 or 32. Default 16. A
	// listener takes the caller's key length.
	PBKeyLen int
	// MaxBW caps what a connection sends, in bytes per second; 0 or -1 means unlimited (a
	// live sender of sluice's sends what its input brings).
	MaxBW int64
	// PeerIdleTimeout closes a connection whose peer sent nothing for this long.
	// Default 5 s.
	PeerIdleTimeout time.Duration
	// ConnectTimeout bounds a caller's handshake (default 3 s) or a rendezvous one (default
	// 30 s).
	ConnectTimeout time.Duration
	// StreamID is the stream id a caller sends; listeners ignore it.
	StreamID string
	// RecvBuffer and SendBuffer cap the connection's buffers in bytes (rcvbuf, sndbuf);
	// 0 sizes them for 50 Mbit/s over the latency (see link.Config).
	RecvBuffer, SendBuffer int
	// KMRefreshRate and KMPreAnnounce are the key refresh period and overlap in packets
	// (kmrefreshrate, kmpreannounce); 0 takes libsrt's defaults (2^24 and 2^12).
	KMRefreshRate, KMPreAnnounce uint32
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
	if o.PeerIdleTimeout < 0 || o.ConnectTimeout < 0 || o.PeerIdleTimeout > MaxTimeout || o.ConnectTimeout > MaxTimeout {
		return fmt.Errorf("timeout: want 0 to %v (in milliseconds): %w", MaxTimeout, ErrInvalidURL)
	}
	if o.RecvBuffer < 0 || o.SendBuffer < 0 || o.RecvBuffer > link.MaxBuffer || o.SendBuffer > link.MaxBuffer {
		return fmt.Errorf("rcvbuf/sndbuf: want 0 to %d bytes: %w", link.MaxBuffer, ErrInvalidURL)
	}
	if len(o.StreamID) > maxStreamIDLen {
		return fmt.Errorf("stream id of %d bytes, over %d: %w", len(o.StreamID), maxStreamIDLen, ErrInvalidURL)
	}
	if _, err := o.config(); err != nil {
		return err
	}
	return nil
}

// config returns the link configuration for o.
func (o Options) config() (link.Config, error) {
	c := link.Config{
		Latency:         o.Latency,
		PeerIdleTimeout: o.PeerIdleTimeout,
		ConnectTimeout:  o.ConnectTimeout,
		Passphrase:      o.Passphrase,
		PBKeyLen:        o.PBKeyLen,
		StreamID:        o.StreamID,
		PayloadSize:     payloadSize,
		MaxBW:           o.MaxBW,
		RecvBuffer:      o.RecvBuffer,
		SendBuffer:      o.SendBuffer,
		KMRefreshRate:   o.KMRefreshRate,
		KMPreAnnounce:   o.KMPreAnnounce,
	}
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	}
	if c.MaxBW == 0 {
		c.MaxBW = -1
	}
	if c.PeerIdleTimeout == 0 {
		c.PeerIdleTimeout = DefaultPeerIdleTimeout
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if err := c.Validate(); err != nil {
		return link.Config{}, fmt.Errorf("%w: %w", err, ErrInvalidURL)
	}
	return c, nil
}
