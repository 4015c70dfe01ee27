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
	rawurl, log, probe := o.URL, o.Log, o.Probe
	if log == nil {
		log = slog.Default()
	}
	ep, err := ParseURL(rawurl)
	if err != nil {
		return fmt.Errorf("srt pull: %w", err)
	}
	where := RedactURL(rawurl)
	log = log.With("srt_pull", where)
	var res ingestResult
	if ep.Listen {
		res, err = pullListen(ctx, ep, s, log, probe)
	} else {
		res, err = pullCall(ctx, ep, s, log, probe)
	}
	switch {
	case ctx.Err() != nil:
		return nil
	case err == nil, peerEnded(err) && res.units > 0:
		return nil
	case peerEnded(err):
		return fmt.Errorf("srt pull %s: peer left: %w", where, ErrNoMedia)
	}
	return fmt.Errorf("srt pull %s: %w", where, err)
}

// pullCall dials the peer and publishes what it sends.
func pullCall(ctx context.Context, ep Endpoint, s *stream.Stream, log *slog.Logger, probe *Probe) (ingestResult, error) {
	conf, err := ep.config()
	if err != nil {
		return ingestResult{}, err
	}
	conf.Log = log
	conn, err := link.Dial(ctx, ep.Addr, conf)
	if err != nil {
		return ingestResult{}, err
	}
	defer func() { _ = conn.Close() }()
	defer probe.track(conn)()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	return publishConn(conn, s, nil, log)
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
