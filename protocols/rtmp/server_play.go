package rtmp

import (
	"context"
	"fmt"
	"time"
)

// play starts a player: the stream must exist (it may be between publishers).
func (sc *serverConn) play(ctx context.Context, cmd command) error {
	name := cmd.streamName()
	key := stripQuery(name)
	if !sc.validStream(cmd.StreamID) {
		return fmt.Errorf("rtmp: play on stream %d that was not created: %w", cmd.StreamID, ErrMalformed)
	}
	if sc.in != nil || sc.playDone != nil {
		return fmt.Errorf("rtmp: play on a busy connection: %w", ErrMalformed)
	}
	// Checked first: without the password nobody learns which streams exist.
	if why := sc.checkPassword(sc.srv.PlayPassword, name); why != "" {
		sc.refuseAuth(ctx, "play", cmd.StreamID, codePlayFailed, key, why)
		return nil
	}
	strm, ok := sc.srv.lookup(key)
	if !ok {
		if n, log := sc.srv.noteRefusal(&sc.srv.playLog); log {
			sc.log.Info("rtmp: play refused: no such stream", "key", key, "refused", n)
		}
		sc.refuseStatus(cmd.StreamID, codePlayNotFound, fmt.Sprintf("stream %q not found", key))
		return nil
	}
	r, err := strm.NewReader("rtmp player " + sc.remote)
	if err != nil {
		sc.refuseStatus(cmd.StreamID, codePlayNotFound, fmt.Sprintf("stream %q: %v", key, err))
		return nil
	}
	for _, step := range []func() error{
		func() error { return sc.c.writeUserControl(ucStreamBegin, cmd.StreamID) },
		func() error {
			return sc.c.writeStatus(cmd.StreamID, levelStatus, codePlayReset, "playing and resetting "+key)
		},
		func() error {
			return sc.c.writeStatus(cmd.StreamID, levelStatus, codePlayStart, "started playing "+key)
		},
	} {
		if err := step(); err != nil {
			r.Close()
			return err
		}
	}
	// A player sends next to nothing: only the write timeout and TCP keep-alives watch it.
	sc.c.setSetupDeadline(time.Time{})
	sc.c.setReadTimeout(0)
	log := sc.log.With("key", key)
	log.Info("rtmp: playing")
	pctx, cancel := context.WithCancel(ctx)
	sc.playCancel, sc.playDone = cancel, make(chan struct{})
	go func() {
		defer close(sc.playDone)
		defer r.Close()
		e := newEgress(sc.c, cmd.StreamID, false)
		err := e.run(pctx, r, strm.Tracks())
		if pctx.Err() == nil {
			// The player failed or the stream closed: end the connection.
			if err != nil {
				log.Info("rtmp: playing ended", "error", err, "dropped", r.Dropped())
			}
			sc.c.close()
		}
	}()
	return nil
}

// stopPlay stops the player goroutine, if any, and waits for it.
func (sc *serverConn) stopPlay() {
	if sc.playDone == nil {
		return
	}
	sc.playCancel()
	sc.c.close() // a write blocked on a stalled peer returns
	<-sc.playDone
	sc.log.Info("rtmp: playing stopped")
}
