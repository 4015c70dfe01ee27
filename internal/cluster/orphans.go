package cluster

import (
	"context"
	"fmt"
)

// Ref names a record: its module and id as the store names them (an orphan's, a running
// process's).
type Ref struct {
	Module string
	ID     string
}

// Orphans lists the active records with no live lease (none yet, released, or expired after
// LeaseTTL without a renewal), oldest first: the ones to place.
func (n *Node) Orphans(ctx context.Context) ([]Ref, error) {
	rows, err := n.db.QueryContext(ctx, `
SELECT r.id, r.module FROM records AS r
WHERE r.active <> 0 AND NOT EXISTS (
	SELECT 1 FROM leases AS l WHERE l.record_id = r.id AND l.node_id IS NOT NULL AND l.expires > now())
ORDER BY r.created, r.id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: list orphans: %w", err)
	}
	defer rows.Close()
	var out []Ref
	for rows.Next() {
		var o Ref
		if err := rows.Scan(&o.ID, &o.Module); err != nil {
			return nil, fmt.Errorf("cluster: list orphans: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cluster: list orphans: %w", err)
	}
	return out, nil
}

// Unheld lists the records whose live lease names this node's id but that this Node does not
// hold: the leases of this id's earlier run (a restart with the same Options.ID). Acquire takes
// them back at once (their processes died with that run), without waiting for the expiry.
func (n *Node) Unheld(ctx context.Context) ([]Ref, error) {
	rows, err := n.db.QueryContext(ctx, `
SELECT r.id, r.module FROM leases AS l JOIN records AS r ON r.id = l.record_id
WHERE l.node_id = $1 AND l.expires > now() ORDER BY r.created, r.id`, n.opts.ID)
	if err != nil {
		return nil, fmt.Errorf("cluster: list the leases of node %q: %w", n.opts.ID, err)
	}
	defer rows.Close()
	held := n.Held()
	var out []Ref
	for rows.Next() {
		var o Ref
		if err := rows.Scan(&o.ID, &o.Module); err != nil {
			return nil, fmt.Errorf("cluster: list the leases of node %q: %w", n.opts.ID, err)
		}
		if _, ok := held[o.ID]; !ok {
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cluster: list the leases of node %q: %w", n.opts.ID, err)
	}
	return out, nil
}
