package srt

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// Pull is the SRT URL input: it calls o.URL ("srt://host:port?streamid=...&latency=..."; see
// ParseURL) and publishes the MPEG-TS it receives into s until the remote ends or fails. With
// mode=listener it listens on the URL's address instead and takes one publisher. It returns nil
// when ctx ended, or when the remote ended the stream after media flowed; an error otherwise.
func Pull(ctx context.Context, s *stream.Stream, o PullOptions) error {
	t, err := newTarget("pull", o.URL, o.Log)
	if err != nil {
		return err
	}
	var res ingestResult
	if t.ep.Listen {
		res, err = pullListen(ctx, t.ep, s, t.log, o.Probe)
	} else {
		res, err = pullCall(ctx, t, s, o.Probe)
	}
	switch {
	case ctx.Err() != nil:
		return nil
	case err == nil, peerEnded(err) && res.units > 0:
		return nil
	case peerEnded(err):
		return t.wrap(fmt.Errorf("peer left: %w", ErrNoMedia))
	}
	return t.wrap(err)
}

// pullCall dials the peer and publishes what it sends.
func pullCall(ctx context.Context, t target, s *stream.Stream, probe *Probe) (ingestResult, error) {
	var res ingestResult
	err := t.call(ctx, probe, func(conn *link.Conn) error {
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		defer stop()
		var err error
		res, err = publishConn(conn, s, nil, t.log)
		return err
	})
	return res, err
}

// pullListen waits for one caller and publishes what it sends.
func pullListen(ctx context.Context, ep Endpoint, s *stream.Stream, log *slog.Logger, probe *Probe) (ingestResult, error) {
	l, err := NewListener(s, ListenOptions{Addr: ep.Addr, Options: ep.Options, Log: log, Probe: probe})
	if err != nil {
		return ingestResult{}, err
	}
	var res ingestResult
	err = l.peer.serve(ctx, true, func(_ context.Context, conn *link.Conn) error {
		defer probe.track(conn)()
		var err error
		res, err = publishConn(conn, s, nil, l.log.With("peer", conn.RemoteAddr().String()))
		return err
	})
	return res, err
}
