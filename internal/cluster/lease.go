package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgForeignKeyViolation is PostgreSQL's SQLSTATE of a foreign key failure.
const pgForeignKeyViolation = "23503"

// Acquire takes the lease of record for this node and returns its new generation: when the
// record has no lease, when its lease expired or was released, or when this node's id holds it
// already. One statement decides, so of nodes racing for a record exactly one wins. Another
// node's live lease gives a *HeldError; a record that does not exist, ErrUnknownRecord.
func (n *Node) Acquire(ctx context.Context, record string) (int64, error) {
	sent := time.Now()
	var gen int64
	err := n.db.QueryRowContext(ctx, `
INSERT INTO leases (record_id, node_id, generation, expires)
VALUES ($1, $2, 1, now() + $3::float8 * interval '1 millisecond')
ON CONFLICT (record_id) DO UPDATE
	SET node_id = EXCLUDED.node_id, generation = leases.generation + 1, expires = EXCLUDED.expires
	WHERE leases.expires <= now() OR leases.node_id IS NULL OR leases.node_id = EXCLUDED.node_id
RETURNING generation`, record, n.opts.ID, ms(n.opts.LeaseTTL)).Scan(&gen)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, n.holder(ctx, record)
	case isForeignKey(err, "leases_record_id_fkey"):
		return 0, fmt.Errorf("node %q: acquire record %q: %w", n.opts.ID, record, ErrUnknownRecord)
	case isForeignKey(err, "leases_node_id_fkey"):
		return 0, fmt.Errorf("node %q: acquire record %q: the node's row is gone (%w); it comes back at the next heartbeat",
			n.opts.ID, record, ErrUnknownNode)
	case err != nil:
		return 0, fmt.Errorf("node %q: acquire record %q: %w", n.opts.ID, record, err)
	}
	n.mu.Lock()
	// Two Acquires of one record at once both win, one after the other: keep the later. The
	// lease's fencing deadline runs from when its Acquire was sent, however long it took.
	if gen > n.held[record] {
		n.held[record] = gen
		n.extended[record] = sent
	}
	n.mu.Unlock()
	return gen, nil
}

// holder is the error of an Acquire that found record's lease live on another node.
func (n *Node) holder(ctx context.Context, record string) error {
	h := &HeldError{Record: record}
	var node sql.NullString
	err := n.db.QueryRowContext(ctx, `SELECT node_id, expires FROM leases WHERE record_id = $1`, record).
		Scan(&node, &h.Expires)
	if err != nil {
		// Released or expired since: the caller may try again.
		return fmt.Errorf("node %q: acquire record %q: %w (holder not found any more: %w)", n.opts.ID, record, ErrHeld, err)
	}
	h.Node = node.String
	return fmt.Errorf("node %q: acquire: %w", n.opts.ID, h)
}

// Renew extends every lease this node holds by LeaseTTL, in one statement, where the row still
// names this node and the generation it took, and returns the records whose lease it lost:
// taken over by another node (generation changed), released by the record's removal, or moved.
// The node must stop those records. A failed renewal changes nothing and returns the error.
func (n *Node) Renew(ctx context.Context) ([]string, error) {
	sent := time.Now()
	ids, gens := n.heldLeases()
	kept := map[string]bool{}
	if len(ids) > 0 {
		rows, err := n.db.QueryContext(ctx, `
UPDATE leases AS l SET expires = now() + $2::float8 * interval '1 millisecond'
FROM unnest($3::text[], $4::bigint[]) AS h (record_id, generation)
WHERE l.record_id = h.record_id AND l.generation = h.generation AND l.node_id = $1
RETURNING l.record_id`, n.opts.ID, ms(n.opts.LeaseTTL), ids, gens)
		if err != nil {
			return nil, fmt.Errorf("node %q: renew %d leases: %w", n.opts.ID, len(ids), err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return nil, fmt.Errorf("node %q: renew: %w", n.opts.ID, err)
			}
			kept[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("node %q: renew: %w", n.opts.ID, err)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("node %q: renew: %w", n.opts.ID, err)
		}
	}
	var lost []string
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, id := range ids {
		// A lease taken again meanwhile (Acquire, a new generation) is neither lost nor
		// extended by this renewal.
		switch {
		case n.held[id] != gens[i]:
		case !kept[id]:
			delete(n.held, id)
			delete(n.extended, id)
			lost = append(lost, id)
		case n.extended[id].Before(sent):
			n.extended[id] = sent
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// Held lists the records whose leases this node holds, with their generations.
func (n *Node) Held() map[string]int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]int64, len(n.held))
	for id, g := range n.held {
		out[id] = g
	}
	return out
}

// Release hands record's lease back at once (after the record stopped here), so another node
// can take it without waiting for the expiry. Releasing a lease this node does not hold (any
// more) does nothing.
func (n *Node) Release(ctx context.Context, record string) error {
	n.mu.Lock()
	gen, ok := n.held[record]
	n.mu.Unlock()
	if !ok {
		return nil
	}
	if err := n.release(ctx, []string{record}, []int64{gen}); err != nil {
		return fmt.Errorf("node %q: release record %q: %w", n.opts.ID, record, err)
	}
	return nil
}

// ReleaseAll hands back every lease this node holds, in one statement (a clean stop, after the
// records stopped).
func (n *Node) ReleaseAll(ctx context.Context) error {
	ids, gens := n.heldLeases()
	if len(ids) == 0 {
		return nil
	}
	if err := n.release(ctx, ids, gens); err != nil {
		return fmt.Errorf("node %q: release %d leases: %w", n.opts.ID, len(ids), err)
	}
	n.log.Info("cluster: leases released", "count", len(ids))
	return nil
}

// release empties the lease rows still holding this node and the generations given (the row
// stays, so the next generation is higher) and forgets them.
func (n *Node) release(ctx context.Context, ids []string, gens []int64) error {
	_, err := n.db.ExecContext(ctx, `
UPDATE leases AS l SET node_id = NULL, expires = now()
FROM unnest($2::text[], $3::bigint[]) AS h (record_id, generation)
WHERE l.record_id = h.record_id AND l.generation = h.generation AND l.node_id = $1`,
		n.opts.ID, ids, gens)
	if err != nil {
		return err
	}
	n.mu.Lock()
	for i, id := range ids {
		if n.held[id] == gens[i] {
			delete(n.held, id)
			delete(n.extended, id)
		}
	}
	n.mu.Unlock()
	return nil
}

// isForeignKey tells whether err is a failure of the foreign key constraint named.
func isForeignKey(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgForeignKeyViolation && pe.ConstraintName == constraint
}

// heldLeases lists the leases this node holds: records and their generations, in one order.
func (n *Node) heldLeases() (ids []string, gens []int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids, gens = make([]string, 0, len(n.held)), make([]int64, 0, len(n.held))
	for id, g := range n.held {
		ids = append(ids, id)
		gens = append(gens, g)
	}
	return ids, gens
}
