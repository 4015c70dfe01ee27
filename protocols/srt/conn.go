package srt

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// LinkStats are an SRT connection's link statistics (see link.Stats).
type LinkStats = link.Stats

// watchPeer calls cancel once c is broken or closed, so that a sender blocked waiting for media
// notices a receiver that left. The caller waits on the returned WaitGroup after ending ctx.
func watchPeer(ctx context.Context, c *link.Conn, cancel context.CancelFunc) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.Done():
			cancel()
		case <-ctx.Done():
		}
	})
	return &wg
}

// peerEnded tells whether err says the peer ended the connection: a shutdown (io.EOF on
// Read, ErrPeerClosed on Write) or its silence past the idle timeout.
func peerEnded(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, link.ErrPeerClosed) || errors.Is(err, link.ErrPeerIdle)
}
