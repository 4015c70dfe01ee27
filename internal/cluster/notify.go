package cluster

import (
	"context"
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
// A connection quiet for retry is pinged, and one whose ping gets no answer within LeaseTTL
// counts as lost: a database host gone without a word (a partition, a failover to another
// address) leaves nothing to read on it, and TCP's keepalive would take minutes to tell.
func (n *Node) Listen(ctx context.Context, retry time.Duration, got func(payload string)) error {
	failing := false
	for {
		listened, err := n.listenOnce(ctx, retry, got)
		if ctx.Err() != nil {
			return nil
		}
		if listened {
			failing = false // a new failure, worth its line
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

// listenOnce opens the connection, listens, and delivers until the connection fails or ctx ends;
// listened reports whether it got as far as listening.
func (n *Node) listenOnce(ctx context.Context, quiet time.Duration, got func(payload string)) (listened bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, n.opts.LeaseTTL)
	conn, err := pgx.Connect(cctx, n.url)
	cancel()
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	lctx, cancel := context.WithTimeout(ctx, n.opts.LeaseTTL)
	_, err = conn.Exec(lctx, `LISTEN `+pgx.Identifier{Channel}.Sanitize())
	cancel()
	if err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	for {
		// The wait ends after quiet without a notification (pgx sets a read deadline, and
		// the connection stays usable), for a ping.
		wctx, cancel := context.WithTimeout(ctx, quiet)
		note, err := conn.WaitForNotification(wctx)
		timedOut := wctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, ctx.Err()
		case err != nil && timedOut:
			pctx, cancel := context.WithTimeout(ctx, n.opts.LeaseTTL)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("ping after %v without a notification: %w", quiet, err)
			}
			continue
		case err != nil:
			return true, fmt.Errorf("wait for a notification: %w", err)
		}
		if note.Channel == Channel && len(note.Payload) <= maxPayload && !strings.ContainsRune(note.Payload, 0) {
			got(note.Payload)
		}
	}
}
