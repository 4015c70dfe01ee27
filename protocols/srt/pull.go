package srt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"

	gosrt "github.com/datarhei/gosrt"

	"github.com/sluicemedia/sluice/internal/stream"
)

// Pull is the SRT URL input: it calls rawurl ("srt://host:port?streamid=...&latency=..."; see
// ParseURL) and publishes the MPEG-TS it receives into s until the remote ends or fails. With
// mode=listener it listens on the URL's address instead and takes one publisher. It returns nil
// when ctx ended, or when the remote ended the stream after media flowed; an error otherwise.
func Pull(ctx context.Context, rawurl string, s *stream.Stream, log *slog.Logger) error {
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
		res, err = pullListen(ctx, ep, s, log)
	} else {
		res, err = pullCall(ctx, ep, s, log)
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

// peerEnded tells whether err says the peer ended the connection: a shutdown (io.EOF), or,
// when the peer's socket closed before gosrt saw the shutdown, the ICMP "port unreachable" of
// our next packet.
func peerEnded(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED)
}

// pullCall dials the peer and publishes what it sends.
func pullCall(ctx context.Context, ep Endpoint, s *stream.Stream, log *slog.Logger) (ingestResult, error) {
	conf, err := ep.config()
	if err != nil {
		return ingestResult{}, err
	}
	conn, err := dial(ctx, ep.Addr, conf)
	if err != nil {
		return ingestResult{}, err
	}
	defer closeDialed(conn)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	return publishConn(conn, s, log)
}

// pullListen waits for one caller and publishes what it sends.
func pullListen(ctx context.Context, ep Endpoint, s *stream.Stream, log *slog.Logger) (ingestResult, error) {
	l, err := NewListener(ep.Addr, ep.Options, s, log)
	if err != nil {
		return ingestResult{}, err
	}
	var res ingestResult
	err = l.peer.serve(ctx, true, func(_ context.Context, conn gosrt.Conn) error {
		var err error
		res, err = publishConn(conn, s, l.log.With("peer", conn.RemoteAddr().String()))
		return err
	})
	return res, err
}
