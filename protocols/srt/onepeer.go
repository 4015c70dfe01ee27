package srt

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// onePeer serves one peer at a time on a listener: callers that come while a session runs are
// refused at the handshake with 1409 (conflict). A caller that comes while the session's peer
// has been silent for takeoverSilence ends that session (and is refused this once), as the SRT
// server module does for a stream's publisher: a restarted encoder gets its input back on its
// next try instead of after the peer-idle timeout.
type onePeer struct {
	ln        *link.Listener
	log       *slog.Logger
	rejects   rateLog
	busy      atomic.Bool
	cur       atomic.Pointer[onePeerSession] // the session running, nil between sessions
	closeOnce sync.Once
}

// onePeerSession is the running session's connection and how to end it.
type onePeerSession struct {
	conn *link.Conn
	end  context.CancelFunc
}

// listenOne binds addr for one peer at a time; the link checks the passphrase itself.
func listenOne(addr string, conf link.Config, log *slog.Logger) (*onePeer, error) {
	p := &onePeer{log: log}
	p.rejects.log = log
	conf.Log = log
	ln, err := link.Listen(addr, conf, p.decide)
	if err != nil {
		return nil, err
	}
	p.ln = ln
	return p, nil
}

// decide takes the one slot, or refuses the caller while it is taken. It runs on the socket's
// read loop.
func (p *onePeer) decide(req *link.Request) link.Reject {
	if !p.busy.CompareAndSwap(false, true) {
		if cur := p.cur.Load(); cur != nil {
			if silent := cur.conn.Silence(); silent >= takeoverSilence {
				p.log.Info("silent peer closed for a new one", "peer", cur.conn.RemoteAddr().String(),
					"silent", silent.Round(time.Millisecond), "new_peer", req.RemoteAddr().String())
				cur.end()
			}
		}
		p.rejects.note("srt connection refused: a peer is already connected", "peer", req.RemoteAddr().String())
		return link.RejectXConflict
	}
	return link.RejectNone
}

// close closes the listener and its connections. Idempotent.
func (p *onePeer) close() { p.closeOnce.Do(func() { _ = p.ln.Close() }) }

// serve runs session for each accepted peer, one at a time, until ctx ends; with once it
// returns after the first session, with that session's error. It closes the listener and waits
// for every goroutine it started before returning. A listener failure is returned; ctx ending
// is not an error.
func (p *onePeer) serve(ctx context.Context, once bool, session func(context.Context, *link.Conn) error) error {
	defer p.close()
	for {
		conn, _, err := p.ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, link.ErrClosed) {
				return nil
			}
			return err
		}
		sctx, end := context.WithCancel(ctx)
		p.cur.Store(&onePeerSession{conn: conn, end: end})
		stop := context.AfterFunc(sctx, func() { _ = conn.Close() })
		err = session(sctx, conn)
		stop()
		end()
		_ = conn.Close()
		p.cur.Store(nil)
		p.busy.Store(false)
		if once {
			return err
		}
	}
}
