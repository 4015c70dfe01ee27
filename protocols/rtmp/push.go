package rtmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Push publishes the units of r to a remote RTMP server, o.URL with o.Key. tracks are the
// stream's tracks, read again from the stream at each discontinuity, across which timestamps
// keep increasing. It returns nil when ctx ends or the stream closes, and an error when the
// server refuses the publication (wrapping ErrRefused) or the connection fails. The caller
// owns r.
func Push(ctx context.Context, r *stream.Reader, tracks []media.Track, o PushOptions) error {
	t, err := parseTarget(o.URL, o.Key)
	if err != nil {
		return err
	}
	where := shown(o.URL, o.Key)
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	cl, err := dial(ctx, t, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("rtmp push %s: %w", where, hideSecrets(err, o.URL, o.Key))
	}
	defer cl.c.close()
	stop := watch(ctx, cl.c)
	defer stop()
	err = cl.push(ctx, r, tracks)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rtmp push %s: %w", where, hideSecrets(err, o.URL, o.Key))
	}
	return nil
}

func (cl *client) push(ctx context.Context, r *stream.Reader, tracks []media.Track) error {
	if err := cl.connect(); err != nil {
		return err
	}
	// releaseStream and FCPublish are answered by some servers and ignored by others.
	for _, name := range []string{"releaseStream", "FCPublish"} {
		cl.txn++
		if err := cl.c.writeCommand(csidCommand, 0, name, cl.txn, nil, cl.t.Name); err != nil {
			return err
		}
	}
	id, err := cl.createStream()
	if err != nil {
		return err
	}
	if err := cl.c.writeCommand(csidData, id, "publish", 0, nil, cl.t.Name, "live"); err != nil {
		return err
	}
	if err := cl.awaitStatus(codePublishStart); err != nil {
		return err
	}
	// The server sends little from now on: acknowledgements, pings, a final status.
	cl.c.setReadTimeout(0)

	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		readErr error
	)
	wg.Go(func() {
		defer cancel()
		readErr = cl.watchServer()
	})
	e := newEgress(cl.c, id, true)
	err = e.run(ectx, r, tracks)
	if ectx.Err() == nil || ctx.Err() != nil {
		// We stop: say so, then close, which ends the reading goroutine.
		_ = cl.c.writeCommand(csidCommand, 0, "FCUnpublish", 0, nil, cl.t.Name)
		_ = cl.c.writeCommand(csidCommand, 0, "deleteStream", 0, nil, id)
	}
	cl.c.close()
	wg.Wait()
	if err == nil && ctx.Err() == nil && readErr != nil && !errors.Is(readErr, errEnd) {
		return readErr
	}
	return err
}

// awaitStatus reads until an onStatus with code, failing on an error status.
func (cl *client) awaitStatus(code string) error {
	for {
		msg, err := cl.c.readMessage()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", code, err)
		}
		if msg.Type != msgCommandAMF0 && msg.Type != msgCommandAMF3 {
			continue
		}
		cmd, err := parseCommand(msg)
		if err != nil || cmd.Name != "onStatus" {
			continue
		}
		if err := statusError(cmd); err != nil {
			return err
		}
		if _, got, _ := cmd.status(); got == code {
			return nil
		}
	}
}

// watchServer reads what the server sends while we publish, until the connection ends or the
// server reports an error.
func (cl *client) watchServer() error {
	for {
		msg, err := cl.c.readMessage()
		if err != nil {
			return fmt.Errorf("server connection: %w", err)
		}
		if msg.Type != msgCommandAMF0 && msg.Type != msgCommandAMF3 {
			continue
		}
		if cmd, err := parseCommand(msg); err == nil && cmd.Name == "onStatus" {
			if err := statusError(cmd); err != nil {
				return err
			}
		}
	}
}
