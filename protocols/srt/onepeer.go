package srt

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	gosrt "github.com/datarhei/gosrt"
)

// onePeer serves one peer at a time on a listener: callers that come while a session runs are
// refused at the handshake.
type onePeer struct {
	ln         gosrt.Listener
	passphrase string
	log        *slog.Logger
	rejects    rateLog
	busy       atomic.Bool
	closeOnce  sync.Once
}

func newOnePeer(ln gosrt.Listener, passphrase string, log *slog.Logger) *onePeer {
	p := &onePeer{ln: ln, passphrase: passphrase, log: log}
	p.rejects.log = log
	return p
}

// close closes the listener and its connections. Idempotent.
func (p *onePeer) close() { p.closeOnce.Do(p.ln.Close) }

// serve runs session for each accepted peer, one at a time, until ctx ends; with once it
// returns after the first session, with that session's error. It closes the listener and waits
// for every goroutine it started before returning. A listener failure is returned; ctx ending
// is not an error.
func (p *onePeer) serve(ctx context.Context, once bool, session func(context.Context, gosrt.Conn) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sessions sync.WaitGroup
	done := make(chan error, 1)
	loop := make(chan error, 1)
	go func() {
		loop <- acceptLoop(p.ln, func(req gosrt.ConnRequest) {
			addr := req.RemoteAddr().String()
			if p.busy.Load() {
				req.Reject(gosrt.REJX_CONFLICT)
				p.rejects.note("srt connection refused: a peer is already connected", "peer", addr)
				return
			}
			if reason, ok := checkPassphrase(req, p.passphrase); !ok {
				req.Reject(reason)
				p.rejects.note("srt connection refused: passphrase mismatch", "peer", addr)
				return
			}
			conn, err := req.Accept()
			if err != nil {
				p.log.Warn("srt handshake failed", "peer", addr, "error", err)
				return
			}
			p.busy.Store(true)
			sessions.Go(func() {
				stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
				err := session(ctx, conn)
				stop()
				_ = conn.Close()
				if once {
					done <- err
					return
				}
				p.busy.Store(false)
			})
		})
	}()
	var err error
	loopDone := false
	select {
	case <-ctx.Done():
	case err = <-done:
	case err = <-loop:
		loopDone = true
	}
	p.close()
	cancel()
	if !loopDone {
		if lerr := <-loop; lerr != nil && err == nil {
			err = lerr
		}
	}
	sessions.Wait()
	return err
}
