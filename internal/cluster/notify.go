package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the PostgreSQL NOTIFY channel of record changes.
const Channel = "sluice_records"

// maxPayload bounds a notification's payload: PostgreSQL allows 8000 bytes; ours are a few ids.
const maxPayload = 1000

// Notify tells every listening node (this one too) of payload on Channel, in its own statement:
// a change to a record another node may run. Payloads longer than 1000 bytes are refused.
func (n *Node) Notify(ctx context.Context, payload string) error {
	if len(payload) > maxPayload {
		return fmt.Errorf("node %q: notify: payload of %d bytes, at most %d", n.opts.ID, len(payload), maxPayload)
	}
	if _, err := n.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, Channel, payload); err != nil {
		return fmt.Errorf("node %q: notify %q: %w", n.opts.ID, payload, err)
	}
	return nil
}

// Listen hands every notification on Channel to got, from a dedicated connection, until ctx
// ends; it then returns nil. A lost connection is opened again after retry (the lease renewal
// covers what was missed meanwhile); got runs on Listen's goroutine and should not block long.
func (n *Node) Listen(ctx context.Context, retry time.Duration, got func(payload string)) error {
	failing := false
	for {
		err := n.listenOnce(ctx, got)
		if ctx.Err() != nil {
			return nil
		}
		if !failing {
			n.log.Warn("cluster: the notification connection failed; opening it again", "error", err, "retry", retry)
			failing = true
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// listenOnce opens the connection, listens, and delivers until the connection fails or ctx ends.
func (n *Node) listenOnce(ctx context.Context, got func(payload string)) error {
	cctx, cancel := context.WithTimeout(ctx, n.opts.LeaseTTL)
	conn, err := pgx.Connect(cctx, n.url)
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("wait for a notification: %w", err)
		}
		if note.Channel == Channel && len(note.Payload) <= maxPayload && !strings.ContainsRune(note.Payload, 0) {
			got(note.Payload)
		}
	}
}
