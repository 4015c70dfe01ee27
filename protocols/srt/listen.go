package srt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// Listener is the SRT listen input: it listens on a UDP port, takes one publisher at a time
// with any stream id, and publishes its MPEG-TS into one Stream. After a publisher leaves it
// takes the next one.
type Listener struct {
	strm  *stream.Stream
	probe *Probe
	log   *slog.Logger
	peer  *onePeer
	addr  string
}

// NewListener validates o.Options and binds o.Addr. The Listener serves once
// Run is called; call Run, or Close when Run will not be called, to release the socket.
func NewListener(s *stream.Stream, o ListenOptions) (*Listener, error) {
	addr, opts, log, probe := o.Addr, o.Options, o.Log, o.Probe
	if log == nil {
		log = slog.Default()
	}
	conf, err := opts.config()
	if err != nil {
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	peer, err := listenOne(addr, conf, log)
	if err != nil {
		return nil, fmt.Errorf("srt listen %s: %w", addr, err)
	}
	peer.log = log.With("srt_listen", peer.ln.Addr().String())
	peer.rejects.log = peer.log
	return &Listener{strm: s, probe: probe, log: peer.log, peer: peer, addr: addr}, nil
}

// Addr returns the UDP address the Listener listens on.
func (l *Listener) Addr() net.Addr { return l.peer.ln.Addr() }

// Close closes the socket and any connection; Run returns soon after. Idempotent.
func (l *Listener) Close() { l.peer.close() }

// Run takes publishers until ctx ends, then closes everything and returns once every goroutine
// it started has ended: nil after ctx ended or Close, an error when the socket fails.
func (l *Listener) Run(ctx context.Context) error {
	l.log.Info("srt listener waiting for a publisher")
	if err := l.peer.serve(ctx, false, l.session); err != nil {
		return fmt.Errorf("srt listen %s: %w", l.addr, err)
	}
	return nil
}

// session publishes one peer's media.
func (l *Listener) session(_ context.Context, conn *link.Conn) error {
	defer l.probe.track(conn)()
	_, err := publishConn(conn, l.strm, nil, l.log.With("peer", conn.RemoteAddr().String(), "stream_id", conn.StreamID()))
	return err
}

// publishConn publishes what conn carries into s until the connection ends, logging the
// session; every payload also goes to rl when it is not nil. It returns io.EOF (wrapped) when
// the peer ended it.
func publishConn(conn *link.Conn, s *stream.Stream, rl *relay, log *slog.Logger) (ingestResult, error) {
	pub, err := s.Publish()
	if err != nil {
		log.Warn("srt publisher refused", "error", err)
		return ingestResult{}, err
	}
	log.Info("publisher connected")
	start := time.Now()
	res, err := publishTS(conn, pub, rl, log, nil)
	if errors.Is(err, io.EOF) && res.units == 0 {
		err = fmt.Errorf("peer left: %w", ErrNoMedia)
	}
	log.Info("publisher left", "reason", err, "units", res.units, "bytes", res.bytes,
		"duration", time.Since(start).Round(time.Millisecond))
	return res, err
}
