package app

import (
	"context"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/supervisor"
)

// publisherPoll is how often a server module's publishers are compared with the last look,
// for publisher_connected and publisher_disconnected (a session shorter than that may go
// unseen).
const publisherPoll = 250 * time.Millisecond

// publisherKey is one publisher session of a server module: the stream and the peer.
type publisherKey struct{ stream, addr string }

// watchPublishers wraps a server module's part so that, while it runs, the streams published
// to it are watched: each new publisher is a publisher_connected event, each one gone a
// publisher_disconnected, with the stream id and the remote address.
func watchPublishers(p *Pipeline, a about, emit emitter) *Pipeline {
	if emit == nil || p.Input == nil || p.Streams == nil {
		return p
	}
	run, list := p.Input.Run, p.Streams
	p.Input.Run = func(ctx context.Context, rep supervisor.Reporter) error {
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { pollPublishers(wctx, list, a, emit) })
		err := run(ctx, rep)
		cancel()
		wg.Wait()
		return err
	}
	return p
}

// pollPublishers compares the published streams with the last look until ctx ends; then
// every publisher still known is gone (the module stopped).
func pollPublishers(ctx context.Context, list func() []api.ActiveStream, a about, emit emitter) {
	known := map[publisherKey]bool{}
	send := func(typ string, k publisherKey) {
		emit.emit(a.event(typ, map[string]any{"stream_id": k.stream, "remote_address": k.addr}))
	}
	t := time.NewTicker(publisherPoll)
	defer t.Stop()
	for {
		now := map[publisherKey]bool{}
		for _, s := range list() {
			now[publisherKey{s.StreamID, s.Publisher}] = true
		}
		for k := range known {
			if !now[k] {
				send(events.PublisherDisconnected, k)
			}
		}
		for k := range now {
			if !known[k] {
				send(events.PublisherConnected, k)
			}
		}
		known = now
		select {
		case <-t.C:
		case <-ctx.Done():
			for k := range known {
				send(events.PublisherDisconnected, k)
			}
			return
		}
	}
}
