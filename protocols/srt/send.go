package srt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// Send is the SRT restream output: it calls o.URL (see ParseURL; with mode=listener it waits
// for one caller instead) and sends r's units as MPEG-TS in 7×188-byte SRT payloads, muxed for
// tracks (the stream's tracks when nil; after a discontinuity, the stream's tracks again).
// Timestamps keep increasing across the stream's discontinuities. It returns nil when ctx
// ended, and an error when the connection or the reader fails; the caller owns r.
func Send(ctx context.Context, r *stream.Reader, tracks []media.Track, o SendOptions) error {
	t, err := newTarget("send", o.URL, o.Log)
	if err != nil {
		return err
	}
	if t.ep.Listen {
		err = sendListen(ctx, t.ep, r, tracks, t.log, o.Probe)
	} else {
		err = t.call(ctx, o.Probe, func(conn *link.Conn) error {
			t.log.Info("srt output connected")
			return sendConn(ctx, conn, r, tracks)
		})
	}
	if ctx.Err() != nil || err == nil {
		return nil
	}
	return t.wrap(err)
}

// sendListen waits for one caller, keeping r drained meanwhile, and sends to it.
func sendListen(ctx context.Context, ep Endpoint, r *stream.Reader, tracks []media.Track, log *slog.Logger, probe *Probe) error {
	conf, err := ep.config()
	if err != nil {
		return err
	}
	peer, err := listenOne(ep.Addr, conf, log)
	if err != nil {
		return fmt.Errorf("listen %s: %w", ep.Addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Until a caller comes, units are read and dropped so that r does not lag behind and get
	// closed; the muxer then starts at a key frame.
	waitCtx, connected := context.WithCancel(ctx)
	defer connected()
	var readErr error
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			if _, err := r.Read(waitCtx); err != nil {
				if waitCtx.Err() == nil {
					readErr = err
					cancel()
				}
				return
			}
		}
	}()
	log.Info("srt output waiting for a caller", "addr", peer.ln.Addr().String())
	err = peer.serve(ctx, true, func(ctx context.Context, conn *link.Conn) error {
		connected()
		<-drained
		if readErr != nil {
			return readErr
		}
		defer probe.track(conn)()
		log.Info("srt output peer connected", "peer", conn.RemoteAddr().String())
		return sendConn(ctx, conn, r, tracks)
	})
	connected()
	<-drained
	if readErr != nil {
		return readErr
	}
	return err
}

// sendConn sends r to conn until either fails or ctx ends.
func sendConn(ctx context.Context, conn *link.Conn, r *stream.Reader, tracks []media.Track) error {
	sctx, cancel := context.WithCancel(ctx)
	watch := watchPeer(sctx, conn, cancel)
	out := newTSOut(conn, tracks)
	err := out.pump(sctx, r)
	cancel()
	watch.Wait()
	if ctx.Err() == nil && errors.Is(err, context.Canceled) {
		return ErrPeerClosed
	}
	return err
}
